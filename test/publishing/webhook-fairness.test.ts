import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/database.js';
import { openDatabase } from '../../src/db/open-database.js';
import type { Schemas } from '../support/api.js';
import { fetchChecked, type FetchedResponse, type FetchInit } from '../support/fetch-checked.js';
import { userWithKey, type TestUser } from '../support/fixtures.js';
import { useDemoServer } from '../support/server.js';
import { until } from '../support/wait.js';
import { startTarpit, startTestReceiver, verifiedWith, type Tarpit, type TestReceiver } from '../support/webhook-receiver.js';

/**
 * The server as it runs, with its own worker, and a tenant whose receivers never answer: another
 * user's publishing and a third user's healthy receiver are served as if it were not there, and
 * the tenant gets no more than its share of attempts in flight (2 per endpoint, 4 per user).
 */

// Each attempt at a tarpit holds a delivery lane for the whole of this; what must not wait for one is bounded well under it.
const RECEIVER_TIMEOUT_MS = 10_000;
const PROMPTLY_MS = 5_000;
// Long enough to see it through if anything waits on the tarpit; the assertions on elapsed time say by how much.
const PATIENCE = { timeoutMs: 25_000, everyMs: 100 };

// Retries an hour away: each event is attempted once while the test runs.
const running = useDemoServer({ allowPrivateNetwork: true, webhooks: { timeoutMs: RECEIVER_TIMEOUT_MS, retryBaseMs: 3_600_000, eventRetentionDays: 30 } });
let database: DatabaseHandle;
let tarpit: Tarpit;
let receiver: TestReceiver;

beforeAll(async () => {
  // Users are made as `herald user create` makes them, on the running server's database.
  database = await openDatabase({ databaseUrl: running.databaseUrl, dataDir: running.dataDir });
  tarpit = await startTarpit();
  receiver = await startTestReceiver();
});
afterAll(async () => {
  // The tarpit goes first, so that the server's worker stops without waiting out attempts held there.
  await tarpit?.close();
  await receiver?.close();
  await database?.close();
});

function call<T>(method: string, path: string, init: FetchInit = {}): Promise<FetchedResponse<T>> {
  return fetchChecked<T>(running.server.url, method, path, init);
}

async function createWebhook(key: string, url: string): Promise<Schemas['WebhookWithSecret']> {
  const res = await call<Schemas['WebhookWithSecret']>('POST', '/api/v1/webhooks', { key, json: { url, eventTypes: ['post.published'] } });
  expect(res.status).toBe(201);
  return res.body;
}

async function ping(key: string, webhookId: string): Promise<Schemas['PingEvent']> {
  const res = await call<Schemas['PingEvent']>('POST', `/api/v1/webhooks/${webhookId}/test`, { key });
  expect(res.status).toBe(202);
  return res.body;
}

async function post(key: string, id: string): Promise<Schemas['PostDetail']> {
  const res = await call<Schemas['PostDetail']>('GET', `/api/v1/posts/${id}`, { key });
  expect(res.status).toBe(200);
  return res.body;
}

async function attempts(key: string, webhookId: string): Promise<Schemas['WebhookDelivery'][]> {
  const res = await call<Schemas['WebhookDeliveryList']>('GET', `/api/v1/webhooks/${webhookId}/deliveries?limit=100`, { key });
  expect(res.status).toBe(200);
  return res.body.data;
}

describe('a tenant whose webhook receivers never answer', { timeout: 60_000 }, () => {
  it("holds up neither another user's publish-now or scheduled post nor a third user's healthy receiver", async () => {
    const slow: TestUser = await userWithKey(database.db, 'Slow receivers');
    const healthy: TestUser = await userWithKey(database.db, 'Healthy receiver');
    const publisher = running.demo.key;
    const accounts = await call<Schemas['AccountList']>('GET', '/api/v1/accounts', { key: publisher });
    const x = accounts.body.data.find((a) => a.platform === 'x')?.id;
    expect(x).toBeDefined();

    // Two endpoints that never answer, and 40 pings to them: well under the write limit.
    const tarpitHooks = [await createWebhook(slow.key, `${tarpit.url}/a`), await createWebhook(slow.key, `${tarpit.url}/b`)];
    for (let i = 0; i < 20; i++) for (const hook of tarpitHooks) await ping(slow.key, hook.id);
    await until('the tarpit to hold an attempt', () => tarpit.open() > 0, PATIENCE);

    const scheduledAt = new Date(Date.now() + 3_000);
    const scheduled = await call<Schemas['PostCreateResult']>('POST', '/api/v1/posts', {
      key: publisher,
      json: { accountIds: [x], caption: 'On time', scheduledAt: scheduledAt.toISOString() },
    });
    expect(scheduled.status).toBe(201);

    const draft = await call<Schemas['PostCreateResult']>('POST', '/api/v1/posts', {
      key: publisher,
      json: { accountIds: [x], caption: 'Now, not after the tarpit' },
    });
    expect(draft.status).toBe(201);
    const publishedAt = Date.now();
    expect((await call('POST', `/api/v1/posts/${draft.body.id}/publish`, { key: publisher })).status).toBe(202);
    await until('the post published now to be published', async () => (await post(publisher, draft.body.id)).status === 'published', PATIENCE);
    expect(Date.now() - publishedAt).toBeLessThan(PROMPTLY_MS);

    await until('the scheduled post to be published', async () => (await post(publisher, scheduled.body.id)).status === 'published', PATIENCE);
    const [target] = (await post(publisher, scheduled.body.id)).targets;
    expect(new Date(target?.publishedAt ?? 0).getTime() - scheduledAt.getTime()).toBeLessThan(PROMPTLY_MS);

    const healthyHook = await createWebhook(healthy.key, receiver.url);
    const pingedAt = Date.now();
    const event = await ping(healthy.key, healthyHook.id);
    const [received] = await receiver.waitFor(1, PATIENCE.timeoutMs);
    expect(Date.now() - pingedAt).toBeLessThan(PROMPTLY_MS);
    expect(received?.headers['webhook-id']).toBe(event.id);
    expect(received && verifiedWith(received, healthyHook.secret)).toBe(true);
    // The receiver answers before Herald records its answer.
    await until('the attempt to be recorded', async () => (await attempts(healthy.key, healthyHook.id)).length > 0, PATIENCE);
    expect(await attempts(healthy.key, healthyHook.id)).toMatchObject([{ eventId: event.id, attempt: 1, succeeded: true, statusCode: 204 }]);

    // All the while, the slow tenant's pings were still waiting their turn at the tarpit.
    expect(tarpit.received.length).toBeGreaterThan(0);
    expect(tarpit.received.length).toBeLessThan(40);
  });

  it('has at most 2 attempts in flight to one endpoint and 4 to all of its endpoints, as each attempt ends and the next is taken', async () => {
    const slow = await userWithKey(database.db, 'Three slow receivers');
    const caps = await startTarpit();
    try {
      const paths = ['/1', '/2', '/3'];
      const hooks = await Promise.all(paths.map((path) => createWebhook(slow.key, `${caps.url}${path}`)));
      for (const hook of hooks) for (let i = 0; i < 4; i++) await ping(slow.key, hook.id);

      const attempted = (path: string) => caps.received.filter((p) => p === path).length;
      // Herald has taken all it may: every endpoint with a ping not yet attempted is at its share, or the user is at theirs.
      const saturated = () => caps.open() > 0 && (caps.open() >= 4 || paths.every((path) => attempted(path) === 4 || caps.open(path) >= 2));
      // Wave after wave: each is held until the receiver drops it, and the next is taken.
      while (caps.received.length < 12) {
        await until(`the tarpit to hold all Herald may send it (${caps.received.length} of 12 so far)`, saturated, PATIENCE);
        expect(caps.open()).toBeLessThanOrEqual(4);
        for (const path of paths) expect(caps.open(path)).toBeLessThanOrEqual(2);
        await caps.release();
      }
      const recorded = async () => (await Promise.all(hooks.map((hook) => attempts(slow.key, hook.id)))).flat();
      await until('every attempt to be recorded', async () => (await recorded()).length === 12, PATIENCE);

      // Never more than that at any moment, and the first wave had four, two on some endpoint.
      expect(caps.mostOpen()).toBe(4);
      expect(Math.max(...paths.map((path) => caps.mostOpen(path)))).toBe(2);
      for (const path of paths) expect(attempted(path)).toBe(4);
      for (const attempt of await recorded()) expect(attempt).toMatchObject({ attempt: 1, succeeded: false, statusCode: null });
    } finally {
      await caps.close();
    }
  });
});
