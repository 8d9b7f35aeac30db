import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { buildHerald } from '../../scripts/build.js';
import { openEmbedded } from '../../src/data/database.js';
import { migrateToLatest } from '../../src/data/migrate.js';
import { PgBossQueue } from '../../src/queue/publication-queue.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A dump of an embedded database with every migration applied, for test files to start from. */
    embeddedTemplatePath: string;
  }
}

/** Migrating once and loading the dump per test file is much faster than initdb + migrate per file. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The CLI and contract suites run the compiled binary: built afresh for every run (about a second),
  // so no run tests a stale dist/ and nothing has to judge whether it is current.
  await buildHerald();
  const pglite = await PGlite.create();
  const handle = await openEmbedded({ instance: pglite });
  await migrateToLatest(handle.db);
  // pg-boss's tables too, so no test file pays for installing them.
  const queue = new PgBossQueue(handle.db, { supervise: false });
  await queue.start();
  await queue.stop();
  await handle.close();
  const dump = await pglite.dumpDataDir('none');
  await pglite.close();
  const dir = await mkdtemp(join(tmpdir(), 'herald-template-'));
  const path = join(dir, 'template.tar');
  await writeFile(path, Buffer.from(await dump.arrayBuffer()));
  project.provide('embeddedTemplatePath', path);
  return () => rm(dir, { recursive: true, force: true });
}
