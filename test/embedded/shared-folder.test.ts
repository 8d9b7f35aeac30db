import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHANNEL_FILE } from '../../src/data/embedded-channel.js';
import { openDatabase } from '../../src/data/open-database.js';
import { createUser } from '../../src/domain/users.js';
import { herald, heraldServe, heraldSpawn, json, type ServeProcess } from '../support/cli.js';

let dataDir: string;
let env: Record<string, string>;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'herald-shared-'));
  env = { HERALD_DATA_DIR: dataDir, HERALD_MIGRATE_ON_START: 'true' };
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const throughServer = () => openDatabase({ databaseUrl: undefined, dataDir }, { throughRunningServer: true });

describe('the embedded folder while a server holds it', { timeout: 120_000 }, () => {
  let server: ServeProcess;
  beforeAll(async () => {
    server = await heraldServe(env);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('is shared through a socket only its owner can open', async () => {
    expect((await stat(join(dataDir, CHANNEL_FILE))).mode & 0o777).toBe(0o600);
  });

  it('rolls back what a command left open when it goes, and the server answers on', async () => {
    const dying = await throughServer();
    const trx = await dying.db.startTransaction().execute();
    const orphan = await createUser(trx, 'Orphan');
    await dying.close();

    const after = await throughServer();
    try {
      expect(await after.db.selectFrom('users').select('id').where('id', '=', orphan.id).execute()).toEqual([]);
      const kept = await createUser(after.db, 'Kept');
      expect(await after.db.selectFrom('users').select(['id', 'name']).where('id', '=', kept.id).execute()).toEqual([{ id: kept.id, name: 'Kept' }]);
      // Postgres's own error fields come back, as from a database of one's own.
      const duplicate = await after.db
        .insertInto('users')
        .values({ id: kept.id, name: 'Again' })
        .execute()
        .catch((err: unknown) => err);
      expect(duplicate).toMatchObject({ code: '23505' });
    } finally {
      await after.close();
    }
    expect((await fetch(`${server.url}/health/ready`)).status).toBe(200);
  });

  it('keeps the dates, numbers and JSON of rows as they are', async () => {
    const shared = await throughServer();
    try {
      const user = await createUser(shared.db, 'Dates');
      const [row] = await shared.db.selectFrom('users').select(['id', 'created_at']).where('id', '=', user.id).execute();
      expect(row?.created_at).toBeInstanceOf(Date);
      const { rows } = await sql<{ n: number; doc: unknown; big: string }>`select 1::int as n, '{"a":[1,null]}'::jsonb as doc, 9007199254740993::bigint as big`.execute(shared.db);
      expect(rows).toEqual([{ n: 1, doc: { a: [1, null] }, big: '9007199254740993' }]);
    } finally {
      await shared.close();
    }
  });
});

describe('the embedded folder after the server stops', { timeout: 120_000 }, () => {
  it('has no socket left, and a command opens the database itself', async () => {
    const server = await heraldServe(env);
    await server.stop();
    await expect(stat(join(dataDir, CHANNEL_FILE))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(json<{ id: string }>(await herald(['user', 'create'], env)).id).toMatch(/^usr_[0-9a-z]{26}$/);
  });

  it('is refused while a process that does not share it (a worker) holds it', async () => {
    const worker = heraldSpawn(['worker'], env, 'pipe');
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    try {
      // It holds the folder from before it says it has started.
      await new Promise<void>((resolve, reject) => {
        let printed = '';
        worker.stderr?.on('data', (chunk: Buffer) => {
          printed += chunk.toString();
          if (printed.includes('worker started')) resolve();
        });
        void exited.then(() => reject(new Error(`the worker exited: ${printed}`)));
      });
      const refused = await herald(['user', 'create'], env);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('is in use by another Herald process');
    } finally {
      worker.kill('SIGTERM');
      await exited;
    }
  });
});
