import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildHerald } from '../../scripts/build.js';
import { startTestDatabaseServer } from './database-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The PostgreSQL server of the run (TEST_DATABASE_URL's, or an embedded one), where test files create their databases. */
    databaseServerUrl: string;
    /** The migrated database on it that each test file's database is a copy of. */
    templateDatabase: string;
    /** Where the run's log and the secrets the tests saw are written (see run-log.ts). */
    runLogDir: string;
  }
}

/** One server for the run, and one migration: each test file clones the migrated template, much faster than migrating. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The CLI and contract suites run the compiled binary: built afresh for every run (about a second),
  // so no run tests a stale dist/ and nothing has to judge whether it is current.
  const starting = startTestDatabaseServer(process.env.TEST_DATABASE_URL || undefined);
  try {
    await buildHerald();
  } catch (err) {
    await starting.then((server) => server.close()).catch(() => {});
    throw err;
  }
  const server = await starting;
  project.provide('databaseServerUrl', server.url);
  project.provide('templateDatabase', server.template);
  const dir = await mkdtemp(join(tmpdir(), 'herald-run-'));
  const logDir = join(dir, 'run-log');
  await mkdir(logDir);
  project.provide('runLogDir', logDir);
  return async () => {
    try {
      await expectNoSecretLogged(logDir);
    } finally {
      await rm(dir, { recursive: true, force: true });
      await server.close();
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
  const secrets = new Set(
    (await read('secrets-'))
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as string),
  );
  const leaks = log.filter((line) => [...secrets].some((secret) => secret.length >= 8 && line.includes(secret)));
  if (leaks.length > 0) {
    const where = leaks.slice(0, 5).map((line) => (JSON.parse(line) as { msg?: string }).msg ?? '(no message)');
    // vitest reports an error thrown here but still exits 0: the exit code must say it too.
    process.exitCode = 1;
    throw new Error(`${leaks.length} line(s) of the test run's log hold a secret a test created: ${where.join('; ')}`);
  }
  process.stdout.write(`log redaction: ${log.length} log lines checked for ${secrets.size} secrets, none found\n`);
}
