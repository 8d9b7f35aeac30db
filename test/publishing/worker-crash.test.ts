import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '../support/api.js';
import { herald, heraldConnectBluesky, heraldServe, heraldSpawn, json } from '../support/cli.js';
import { TEST_DATABASE_URL, createTestDatabase, type TestDatabase } from '../support/database.js';
import { makeDataDir, removeDataDir } from '../support/data-dir.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { fetchChecked } from '../support/fetch-checked.js';
import { startTestPds, type TestPds } from '../support/pds.js';
import { until } from '../support/wait.js';

/**
 * A `herald worker` process killed after Bluesky wrote the record and before Herald stored the
 * outcome: the next worker repeats the same call, and the PDS holds exactly one record.
 */
let pds: TestPds;
let proxy: FaultProxy;
let dataDir: string;
let database: TestDatabase | undefined;
let env: Record<string, string>;

beforeAll(async () => {
  pds = await startTestPds();
  proxy = await startFaultProxy(pds.url);
  dataDir = await makeDataDir('herald-crash-');
  env = { HERALD_DATA_DIR: dataDir, HERALD_ALLOW_PRIVATE_NETWORK: 'true', HERALD_PUBLISH_LEASE_SECONDS: '2', HERALD_WORKER: 'false', LOG_LEVEL: 'silent' };
  if (TEST_DATABASE_URL !== undefined) {
    database = await createTestDatabase();
    env.DATABASE_URL = database.url;
  }
}, 120_000);
afterAll(async () => {
  await proxy?.close();
  await pds?.close();
  await database?.close();
  await removeDataDir(dataDir);
});

describe('a worker killed mid-call', () => {
  it('is followed by one that completes the same call: exactly one record', async () => {
    const alice = await pds.createAccount('alice');
    json(await herald(['db', 'migrate'], env));
    const user = json<{ id: string }>(await herald(['user', 'create', '--name', 'Alice'], env)).id;
    const key = json<{ key: string }>(await herald(['key', 'create', '--user', user], env)).key;
    const account = await heraldConnectBluesky(env, proxy.url, alice, user);
    expect(account).toMatchObject({ mode: 'live', username: alice.handle });

    // The API only (no worker in it): the post is handed to the queue, nothing publishes it yet.
    let api = await heraldServe(env);
    const created = await fetchChecked<{ id: string }>(api.url, 'POST', '/api/v1/posts', {
      key,
      json: { accountIds: [account.id], caption: 'Exactly once, whatever happens' },
    });
    expect((await fetchChecked(api.url, 'POST', `/api/v1/posts/${created.body.id}/publish`, { key })).status).toBe(202);
    expect(await api.stop()).toBe(0);

    proxy.plan((req) => (req.path.endsWith('repo.putRecord') ? { kind: 'commitThenHang' } : undefined));
    const doomed = heraldSpawn(['worker', '--once'], env);
    const died = new Promise((resolve) => doomed.once('exit', resolve));
    await until('the PDS to commit the record', () => proxy.requests.some((r) => r.path.endsWith('repo.putRecord')));
    doomed.kill('SIGKILL');
    await died;
    expect(await pds.listRecords(alice.did)).toHaveLength(1);

    // Once the dead worker's lease has run out, a new worker repeats the call; the PDS keeps one record.
    proxy.plan(() => undefined);
    expect(json<{ posts: number }>(await herald(['worker', '--once'], env))).toEqual({ posts: 1, deliveries: 0 });

    api = await heraldServe(env);
    try {
      const post = await fetchChecked<Schemas['PostDetail']>(api.url, 'GET', `/api/v1/posts/${created.body.id}`, { key });
      const records = await pds.listRecords(alice.did);
      expect(records).toHaveLength(1);
      expect(post.body.status).toBe('published');
      expect(post.body.targets[0]).toMatchObject({ status: 'published', platformPostId: records[0]?.uri, error: null });
      expect(proxy.requests.filter((r) => r.path.endsWith('repo.putRecord')).map((r) => r.status)).toEqual([0, 200]);
    } finally {
      await api.stop();
    }
  }, 180_000);
});
