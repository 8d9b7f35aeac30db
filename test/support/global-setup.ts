import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
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
    /** Where the run's log and the secrets the tests saw are written (see run-log.ts). */
    runLogDir: string;
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
  const logDir = join(dir, 'run-log');
  await mkdir(logDir);
  project.provide('runLogDir', logDir);
  return async () => {
    try {
      await expectNoSecretLogged(logDir);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
}

/**
 * Every secret a test created or was shown, looked for in the log of the whole run. Fails the
 * run naming where a secret leaked (the line's logger message), never the secret itself.
 */
async function expectNoSecretLogged(logDir: string): Promise<void> {
  const files = await readdir(logDir);
  const read = async (prefix: string) => (await Promise.all(files.filter((f) => f.startsWith(prefix)).map((f) => readFile(join(logDir, f), 'utf8')))).join('');
  const log = (await read('log-')).split('\n').filter((line) => line !== '');
  const secrets = new Set((await read('secrets-')).split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as string));
  const leaks = log.filter((line) => [...secrets].some((secret) => secret.length >= 8 && line.includes(secret)));
  if (leaks.length > 0) {
    const where = leaks.slice(0, 5).map((line) => (JSON.parse(line) as { msg?: string }).msg ?? '(no message)');
    // vitest reports an error thrown here but still exits 0: the exit code must say it too.
    process.exitCode = 1;
    throw new Error(`${leaks.length} line(s) of the test run's log hold a secret a test created: ${where.join('; ')}`);
  }
  process.stdout.write(`log redaction: ${log.length} log lines checked for ${secrets.size} secrets, none found\n`);
}
