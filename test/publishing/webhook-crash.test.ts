import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOST_ATTEMPT_ERROR } from '../../src/domain/webhooks/delivery.js';
import type { Schemas } from '../support/api.js';
import { herald, heraldServe, heraldSpawn, json } from '../support/cli.js';
import { expectEventMatchesSpec } from '../support/contract.js';
import { TEST_DATABASE_URL, createTestDatabase, type TestDatabase } from '../support/database.js';
import { makeDataDir, removeDataDir } from '../support/data-dir.js';
import { fetchChecked } from '../support/fetch-checked.js';
import { startTestReceiver, verifiedWith, type TestReceiver } from '../support/webhook-receiver.js';

/**
 * A `herald worker` process killed after the outcome was recorded and while its event was on
 * the wire: the next worker sends the same event again once the dead one's lease ends, and the
 * receiver sees one event id.
 */
let receiver: TestReceiver;
let dataDir: string;
let database: TestDatabase | undefined;
let env: Record<string, string>;

beforeAll(async () => {
  receiver = await startTestReceiver();
  dataDir = await makeDataDir('herald-webhook-crash-');
  // Three seconds to answer: the lease on a delivery is that and five more.
  env = { HERALD_DATA_DIR: dataDir, HERALD_ALLOW_PRIVATE_NETWORK: 'true', HERALD_WEBHOOK_TIMEOUT_MS: '3000', HERALD_WORKER: 'false', LOG_LEVEL: 'silent' };
  if (TEST_DATABASE_URL !== undefined) {
    database = await createTestDatabase();
    env.DATABASE_URL = database.url;
  }
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  await database?.close();
  await removeDataDir(dataDir);
});

describe('a worker killed between an outcome and its delivery', () => {
  it('is followed by one that delivers the same event: one event id, the lost attempt on record', async () => {
    json(await herald(['db', 'migrate'], env));
    const user = json<{ id: string }>(await herald(['user', 'create', '--name', 'Ada'], env)).id;
    const key = json<{ key: string }>(await herald(['key', 'create', '--user', user], env)).key;
    const account = json<{ id: string }>(await herald(['account', 'connect', '--platform', 'x', '--username', 'ada', '--user', user], env)).id;

    let api = await heraldServe(env);
    const hook = await fetchChecked<Schemas['WebhookWithSecret']>(api.url, 'POST', '/api/v1/webhooks', {
      key,
      json: { url: receiver.url, eventTypes: ['post.published'] },
    });
    expect(hook.status).toBe(201);
    const created = await fetchChecked<{ id: string }>(api.url, 'POST', '/api/v1/posts', {
      key,
      json: { accountIds: [account], caption: 'Told exactly once' },
    });
    expect((await fetchChecked(api.url, 'POST', `/api/v1/posts/${created.body.id}/publish`, { key })).status).toBe(202);
    expect(await api.stop()).toBe(0);

    // The worker publishes, records the outcome with its event, sends it, and dies before the answer.
    receiver.answer({ hang: true });
    const doomed = heraldSpawn(['worker', '--once'], env);
    const died = new Promise((resolve) => doomed.once('exit', resolve));
    await receiver.waitFor(1, 60_000);
    doomed.kill('SIGKILL');
    await died;

    expect(json(await herald(['worker', '--once'], env))).toEqual({ posts: 0, deliveries: 1 });

    const received = await receiver.waitFor(2);
    expect(received).toHaveLength(2);
    const [first, second] = received;
    expect(second?.headers['webhook-id']).toBe(first?.headers['webhook-id']);
    expect(second?.body).toBe(first?.body);
    expect(second && verifiedWith(second, hook.body.secret)).toBe(true);
    expectEventMatchesSpec(second?.json);
    expect(second?.json).toMatchObject({ type: 'post.published', data: { id: created.body.id, status: 'published' } });

    api = await heraldServe(env);
    try {
      const attempts = await fetchChecked<Schemas['WebhookDeliveryList']>(api.url, 'GET', `/api/v1/webhooks/${hook.body.id}/deliveries`, { key });
      expect(attempts.body.data.map((a) => [a.attempt, a.succeeded, a.statusCode, a.error])).toEqual([
        [2, true, 204, null],
        [1, false, null, LOST_ATTEMPT_ERROR],
      ]);
      expect(new Set(attempts.body.data.map((a) => a.eventId))).toEqual(new Set([first?.headers['webhook-id']]));
    } finally {
      await api.stop();
    }
  }, 180_000);
});
