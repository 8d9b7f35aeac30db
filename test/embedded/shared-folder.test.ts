import { type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../src/db/migrations/index.js';
import type { Schemas } from '../support/api.js';
import { herald, heraldServe, heraldSpawn, json } from '../support/cli.js';
import { makeDataDir, removeDataDir } from '../support/data-dir.js';
import { fetchChecked } from '../support/fetch-checked.js';
import { until } from '../support/wait.js';

// The default database: no DATABASE_URL, the PostgreSQL Herald runs itself in HERALD_DATA_DIR.
let dataDir: string;
let env: Record<string, string>;

beforeAll(async () => {
  dataDir = await makeDataDir('herald-embedded-');
  env = { HERALD_DATA_DIR: dataDir, HERALD_WORKER: 'false' };
  // The first command on the new folder makes the cluster, starts the server, and stops it when done.
  expect(json(await herald(['db', 'migrate'], env))).toEqual({ migrated: Object.keys(migrations) });
}, 60_000);

afterAll(async () => {
  await removeDataDir(dataDir);
});

/** Whether a PostgreSQL server runs in the folder, by its lock file (what `pg_ctl status` reads). */
const serverRuns = (dir = dataDir) => existsSync(join(dir, 'pgdata', 'postmaster.pid'));
const serverPid = async () => Number((await readFile(join(dataDir, 'pgdata', 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);

/** A client as `psql -h <HERALD_DATA_DIR>/pgdata -U postgres` connects: over the socket in the folder. */
async function psql(): Promise<pg.Client> {
  const client = new pg.Client({ host: join(dataDir, 'pgdata'), user: 'postgres', database: 'postgres' });
  await client.connect();
  return client;
}

/** `herald worker`, once it says it has started. */
async function startWorker(): Promise<{ process: ChildProcess; exited: Promise<number | null> }> {
  const worker = heraldSpawn(['worker'], { ...env, LOG_LEVEL: 'info' }, 'pipe');
  const exited = new Promise<number | null>((resolve) => worker.once('exit', resolve));
  let printed = '';
  worker.stderr?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  await until('the worker to start', () => printed.includes('worker started') || worker.exitCode !== null);
  expect(worker.exitCode, printed).toBeNull();
  return { process: worker, exited };
}

describe('the embedded PostgreSQL', { timeout: 180_000 }, () => {
  it('is started by a CLI command that needs it, and stopped when the command is done', async () => {
    expect(serverRuns()).toBe(false);
    expect(json(await herald(['user', 'create'], env))).toEqual({ id: expect.stringMatching(/^usr_/) as string });
    expect(serverRuns()).toBe(false);
  });

  it('serves herald serve, two workers, CLI commands and psql side by side; the last Herald process to stop stops it', async () => {
    const server = await heraldServe(env);
    const workers = [await startWorker(), await startWorker()];
    const user = json<{ id: string }>(await herald(['user', 'create', '--name', 'Side by side'], env)).id;
    const account = json<{ id: string }>(await herald(['account', 'connect', '--platform', 'x', '--username', 'ada', '--user', user], env)).id;
    const key = json<{ key: string }>(await herald(['key', 'create', '--user', user], env)).key;
    const client = await psql();
    try {
      // Over the socket only: the server listens on no TCP address.
      expect((await client.query<{ listen_addresses: string }>('show listen_addresses')).rows).toEqual([{ listen_addresses: '' }]);
      expect((await client.query('select name from users where id = $1', [user])).rows).toEqual([{ name: 'Side by side' }]);

      // The server does not publish (HERALD_WORKER=false): one of the workers does.
      const scheduledAt = new Date(Date.now() + 1000).toISOString();
      const created = await fetchChecked<{ id: string }>(server.url, 'POST', '/api/v1/posts', {
        key,
        json: { accountIds: [account], caption: 'From a worker', scheduledAt },
      });
      expect(created.status).toBe(201);
      const detail = () => fetchChecked<Schemas['PostDetail']>(server.url, 'GET', `/api/v1/posts/${created.body.id}`, { key });
      await until('a worker to publish the post', async () => (await detail()).body.status === 'published');

      // The server stops; PostgreSQL keeps running for the workers, which go on working, and for commands.
      expect(await server.stop()).toBe(0);
      expect(serverRuns()).toBe(true);
      expect(json(await herald(['user', 'create'], env))).toEqual({ id: expect.stringMatching(/^usr_/) as string });
      const [first, second] = workers.map((w) => w.process);
      first?.kill('SIGTERM');
      second?.kill('SIGTERM');
      expect(await Promise.all(workers.map((w) => w.exited))).toEqual([0, 0]);
      // psql is still connected: the last worker left PostgreSQL running for it.
      expect((await client.query('select count(*)::int as n from posts where id = $1', [created.body.id])).rows).toEqual([{ n: 1 }]);
    } finally {
      await client.end();
    }
    // Nothing of Herald's uses it now; the next Herald process to leave stops it.
    expect(serverRuns()).toBe(true);
    json(await herald(['key', 'list', '--user', user], env));
    expect(serverRuns()).toBe(false);
  });

  it('is started again after a crash: by the server that uses it, or by the next command when Herald was killed', async () => {
    const user = json<{ id: string }>(await herald(['user', 'create'], env)).id;
    const key = json<{ key: string }>(await herald(['key', 'create', '--user', user], env)).key;
    const server = await heraldServe(env);
    const accounts = async () => (await fetchChecked(server.url, 'GET', '/api/v1/accounts', { key }).catch(() => ({ status: 0 }))).status;
    try {
      expect(await accounts()).toBe(200);
      const killed = await serverPid();
      process.kill(killed, 'SIGKILL');
      // Its stale lock file is no obstacle: a request whose connection finds the server gone starts it again (with
      // crash recovery). Until its backends notice, the API may still answer through them.
      await until('a new PostgreSQL to answer', async () => (await accounts()) === 200 && ![0, killed].includes(await serverPid()));
    } finally {
      process.kill(server.pid, 'SIGKILL');
      await server.stop();
    }
    // PostgreSQL outlives the killed herald serve; the next command uses it, and being the last, stops it.
    expect(serverRuns()).toBe(true);
    expect(json(await herald(['key', 'list', '--user', user], env))).toMatchObject({ keys: [{ state: 'active' }] });
    expect(serverRuns()).toBe(false);
  });

  it('is created once when several commands start on a new folder at the same moment', async () => {
    const fresh = join(dataDir, 'fresh');
    const freshEnv = { ...env, HERALD_DATA_DIR: fresh };
    const early = await Promise.all([1, 2, 3].map(() => herald(['user', 'create'], freshEnv)));
    // Each reached the one database, which has no tables yet.
    const pending = `herald: The database has ${Object.keys(migrations).length} pending migration(s); run "herald db migrate" first\n`;
    expect(early.map((r) => [r.code, r.stderr])).toEqual([1, 2, 3].map(() => [1, pending]));
    json(await herald(['db', 'migrate'], freshEnv));
    const made = await Promise.all([1, 2, 3].map(() => herald(['user', 'create'], freshEnv)));
    expect(new Set(made.map((r) => json<{ id: string }>(r).id)).size).toBe(3);
    expect(serverRuns(fresh)).toBe(false);
    // The clusters the two losers made were thrown away.
    expect((await readdir(fresh)).filter((name) => name.startsWith('pgdata'))).toEqual(['pgdata']);
  });

  it('refuses a data folder too long for its socket, saying what to do', async () => {
    const deep = join(dataDir, 'd'.repeat(100));
    const refused = await herald(['user', 'create'], { ...env, HERALD_DATA_DIR: deep });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^herald: HERALD_DATA_DIR is too long for the embedded PostgreSQL's socket \(.+ is \d+ bytes, at most 107 fit\): use a folder of at most 86 bytes, or set DATABASE_URL\n$/,
    );
    expect(existsSync(deep)).toBe(false);
  });
});
