import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open-database.js';
import { herald, heraldServe, json } from '../support/cli.js';
import { TEST_DATABASE_URL, createTestDatabase, type TestDatabase } from '../support/database.js';
import { makeDataDir, removeDataDir } from '../support/data-dir.js';

let dataDir: string;
let database: TestDatabase | undefined;
let env: Record<string, string>;

beforeAll(async () => {
  dataDir = await makeDataDir('herald-shutdown-');
  env = { HERALD_DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
  if (TEST_DATABASE_URL !== undefined) {
    database = await createTestDatabase();
    env.DATABASE_URL = database.url;
  }
  json(await herald(['db', 'migrate'], env));
}, 120_000);

afterAll(async () => {
  await database?.close();
  await removeDataDir(dataDir);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('herald serve on SIGTERM', () => {
  it('stops taking connections, finishes the request in flight (its post is saved), then exits 0', async () => {
    // One command for a user, accounts and a key.
    const demo = json<{ accounts: { id: string }[]; key: string }>(await herald(['demo'], env));
    const [accountId, key] = [demo.accounts[0]?.id, demo.key];
    const service = await heraldServe(env);
    const url = new URL('/api/v1/posts', service.url);
    const body = Buffer.from(JSON.stringify({ accountIds: [accountId], caption: 'Sent while the server stops' }));

    // The request is in flight: its headers and half its body are sent, the rest comes after SIGTERM.
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        url,
        { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': body.length } },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.write(body.subarray(0, 10));
      setTimeout(() => req.end(body.subarray(10)), 2500);
    });
    // Long enough for a busy machine to have read the request's headers: one that arrives after SIGTERM is refused with 503 by design.
    await sleep(1000);
    const exited = service.stop();
    await sleep(500);
    // No new connection is taken once it is stopping.
    await expect(fetch(new URL('/health/live', service.url), { signal: AbortSignal.timeout(5000) })).rejects.toThrow();

    const { status, body: text } = await answer;
    expect(status).toBe(201);
    const { id } = JSON.parse(text) as { id: string };
    expect(await exited).toBe(0);

    // After the exit, the post is in the database: the request was finished, not cut.
    const handle = database ?? (await openDatabase({ databaseUrl: undefined, dataDir }));
    try {
      const rows = await handle.db.selectFrom('posts').select(['id', 'caption']).where('id', '=', id).execute();
      expect(rows).toEqual([{ id, caption: 'Sent while the server stops' }]);
    } finally {
      if (database === undefined) await handle.close();
    }
  }, 90_000);
});
