import { describe, expect, it } from 'vitest';
import { disconnectAccount } from '../../src/domain/accounts.js';
import { emitPing } from '../../src/domain/webhooks/events.js';
import { useTestApi, type Schemas } from '../support/api.js';
import { expectEventMatchesSpec } from '../support/contract.js';
import { account, userWithKey, type TestUser } from '../support/fixtures.js';
import { createPost, postDetail, publishNow } from '../support/posts.js';
import { useTestReceiver, verifiedWith, type ReceivedWebhook } from '../support/webhook-receiver.js';

const api = useTestApi();
const receiver = useTestReceiver();

/** Events received from here on, in order. */
function mark(): () => ReceivedWebhook[] {
  const from = receiver.received.length;
  return () => receiver.received.slice(from);
}

async function createWebhook(u: TestUser, eventTypes: string[], url = receiver.url): Promise<Schemas['WebhookWithSecret']> {
  const res = await api.request<Schemas['WebhookWithSecret']>({ method: 'POST', url: '/api/v1/webhooks', key: u.key, body: { url, eventTypes } });
  expect(res.status).toBe(201);
  return res.body;
}

async function deliveries(u: TestUser, webhookId: string): Promise<Schemas['WebhookDelivery'][]> {
  const res = await api.request<Schemas['WebhookDeliveryList']>({ method: 'GET', url: `/api/v1/webhooks/${webhookId}/deliveries`, key: u.key });
  expect(res.status).toBe(200);
  return res.body.data;
}

async function webhook(u: TestUser, id: string): Promise<Schemas['Webhook']> {
  const res = await api.request<Schemas['Webhook']>({ method: 'GET', url: `/api/v1/webhooks/${id}`, key: u.key });
  expect(res.status).toBe(200);
  return res.body;
}

function eventsOf(received: ReceivedWebhook[]): { id: string; type: string; data: unknown }[] {
  return received.map((r) => r.json as { id: string; type: string; data: unknown });
}

describe('the road from an outcome to a signed event', () => {
  it('schedules, publishes on sandbox and delivers post.published and target.published, signed, as GET shows them', async () => {
    const u = await userWithKey(api.db);
    const other = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x', 'ada');
    const li = await account(api.db, u.userId, 'linkedin', 'ada');
    const hook = await createWebhook(u, ['post.published', 'target.published', 'post.failed']);
    const othersHook = await createWebhook(other, ['post.published', 'target.published']);
    const since = mark();

    const id = await createPost(api, u, { accountIds: [x, li], caption: 'Signed and delivered', scheduledAt: new Date(Date.now() + 60_000).toISOString() });
    await api.publishing.drain();
    expect(await api.publishing.deliver()).toBe(0);
    api.publishing.runAhead(61_000);
    expect(await api.publishing.drain()).toBe(1);
    const published = await postDetail(api, u, id);
    expect(published.status).toBe('published');
    await api.publishing.deliverAll();
    api.publishing.runAhead(0);

    const received = since();
    const events = eventsOf(received);
    // One event per settled target and one for the post; nothing for the other user's endpoint, nothing unsubscribed.
    expect(events.map((e) => e.type).sort()).toEqual(['post.published', 'target.published', 'target.published']);
    for (const r of received) {
      expect(verifiedWith(r, hook.secret)).toBe(true);
      expect(verifiedWith(r, othersHook.secret)).toBe(false);
      expect(r.headers['webhook-id']).toBe((r.json as { id: string }).id);
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      expectEventMatchesSpec(r.json);
    }
    expect(new Set(events.map((e) => e.id)).size).toBe(3);
    const postEvent = events.find((e) => e.type === 'post.published');
    expect(postEvent?.data).toEqual(published);
    const targetEvents = events.filter((e) => e.type === 'target.published').map((e) => e.data as { postId: string; target: Schemas['PostTarget'] });
    expect(targetEvents.map((d) => d.postId)).toEqual([id, id]);
    expect(targetEvents.map((d) => d.target).sort((a, b) => a.accountId.localeCompare(b.accountId))).toEqual(
      [...published.targets].sort((a, b) => a.accountId.localeCompare(b.accountId)),
    );

    const attempts = await deliveries(u, hook.id);
    expect(attempts).toHaveLength(3);
    for (const a of attempts) expect(a).toMatchObject({ attempt: 1, succeeded: true, statusCode: 204, error: null, nextAttemptAt: null });
    expect(attempts.map((a) => a.eventId).sort()).toEqual(events.map((e) => e.id).sort());
    expect(await deliveries(other, othersHook.id)).toEqual([]);
  });

  it('reports a refused target and a partial post: target.failed, target.published, post.partial', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x', 'ada');
    const gone = await account(api.db, u.userId, 'threads', 'ada');
    await createWebhook(u, ['target.failed', 'target.published', 'post.partial', 'post.published']);
    const id = await createPost(api, u, { accountIds: [x, gone], caption: 'Half of it' });
    await disconnectAccount(api.publishing.serviceDeps, gone, new Date());
    const since = mark();
    expect((await api.request({ method: 'POST', url: `/api/v1/posts/${id}/publish`, key: u.key })).status).toBe(202);
    await api.publishing.drain();
    await api.publishing.deliverAll();

    const events = eventsOf(since());
    expect(events.map((e) => e.type).sort()).toEqual(['post.partial', 'target.failed', 'target.published']);
    const failed = events.find((e) => e.type === 'target.failed')?.data as { target: Schemas['PostTarget'] };
    expect(failed.target).toMatchObject({ accountId: gone, status: 'failed', error: { category: 'auth_expired', retrying: false } });
    expect((events.find((e) => e.type === 'post.partial')?.data as Schemas['PostDetail']).status).toBe('partial');
  });

  it('retries a receiver that fails twice: three attempts of one event, the same id and body each time', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x', 'ada');
    const hook = await createWebhook(u, ['post.published']);
    const since = mark();
    receiver.answer({ status: 500, body: 'x'.repeat(10_000) }, { status: 503, body: 'try later' });
    await publishNow(api, u, { accountIds: [x], caption: 'Third time lucky' });
    await api.publishing.drain();
    await api.publishing.deliverAll();

    const received = since();
    expect(received).toHaveLength(3);
    expect(new Set(received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(new Set(received.map((r) => r.body)).size).toBe(1);
    for (const r of received) expect(verifiedWith(r, hook.secret)).toBe(true);

    const attempts = await deliveries(u, hook.id);
    expect(attempts.map((a) => [a.attempt, a.succeeded, a.statusCode])).toEqual([
      [3, true, 204],
      [2, false, 503],
      [1, false, 500],
    ]);
    expect(attempts[2]?.responseExcerpt).toBe('x'.repeat(256));
    expect(attempts[1]).toMatchObject({ error: expect.stringContaining('503') as unknown, responseExcerpt: 'try later' });
    // Each failed attempt named when the next was due, and the next came no earlier.
    for (const [later, earlier] of [
      [attempts[0], attempts[1]],
      [attempts[1], attempts[2]],
    ] as const) {
      expect(earlier?.nextAttemptAt).not.toBeNull();
      expect(Date.parse(later?.attemptedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(earlier?.nextAttemptAt ?? ''));
    }
    expect(await webhook(u, hook.id)).toMatchObject({ enabled: true, consecutiveFailures: 0, disabledReason: null });
  });

  it('gives up on a receiver that never answers, disables the endpoint saying why, and sends it nothing more until it is enabled', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x', 'ada');
    const hook = await createWebhook(u, ['post.published']);
    const since = mark();
    receiver.answer({ hang: true }, { hang: true }, { hang: true }, { hang: true });
    await publishNow(api, u, { accountIds: [x], caption: 'Into the void' });
    await api.publishing.drain();
    await api.publishing.deliverAll();

    expect(since()).toHaveLength(4);
    const attempts = await deliveries(u, hook.id);
    expect(attempts.map((a) => [a.attempt, a.succeeded, a.statusCode, a.error])).toEqual([4, 3, 2, 1].map((n) => [n, false, null, 'No answer within 500 ms']));
    // Each waited out the timeout. Node starts a timer from the event loop's clock, which lags the
    // real one by however long the loop's current turn has run (6 ms on a loaded CI machine), so the
    // measured wait can fall a little short of 500.
    for (const a of attempts) expect(a.latencyMs).toBeGreaterThanOrEqual(450);
    expect(attempts[0]?.nextAttemptAt).toBeNull();
    const disabled = await webhook(u, hook.id);
    expect(disabled).toMatchObject({ enabled: false, consecutiveFailures: 4 });
    expect(disabled.disabledReason).toContain(attempts[0]?.eventId);
    expect(disabled.disabledReason).toContain('No answer within 500 ms');
    expect(disabled.disabledAt).not.toBeNull();

    // While disabled, outcomes raise no delivery to it.
    const whileOff = mark();
    await publishNow(api, u, { accountIds: [x], caption: 'Nobody listening' });
    await api.publishing.drain();
    await api.publishing.deliverAll();
    expect(whileOff()).toEqual([]);
    expect(await deliveries(u, hook.id)).toHaveLength(4);

    const enabled = await api.request<Schemas['Webhook']>({ method: 'PATCH', url: `/api/v1/webhooks/${hook.id}`, key: u.key, body: { enabled: true } });
    expect(enabled.body).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null, consecutiveFailures: 0 });
    const afterOn = mark();
    await publishNow(api, u, { accountIds: [x], caption: 'Back on' });
    await api.publishing.drain();
    await api.publishing.deliverAll();
    expect(eventsOf(afterOn()).map((e) => e.type)).toEqual(['post.published']);
  });
});

describe('a receiver that answers 410 Gone', () => {
  it('is disabled at once, saying so, without retrying the event, and sent nothing more', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x', 'gone');
    const hook = await createWebhook(u, ['post.published']);
    const since = mark();
    receiver.answer({ status: 410, body: 'gone' });
    await publishNow(api, u, { accountIds: [x], caption: 'To a removed endpoint' });
    await api.publishing.drain();
    await api.publishing.deliverAll();
    expect(since()).toHaveLength(1);
    const attempts = await deliveries(u, hook.id);
    expect(attempts.map((a) => [a.attempt, a.succeeded, a.statusCode, a.nextAttemptAt])).toEqual([[1, false, 410, null]]);
    const disabled = await webhook(u, hook.id);
    expect(disabled).toMatchObject({ enabled: false, disabledReason: `Disabled because the endpoint answered 410 Gone to event ${attempts[0]?.eventId}` });

    const whileOff = mark();
    await publishNow(api, u, { accountIds: [x], caption: 'Nobody there' });
    await api.publishing.drain();
    await api.publishing.deliverAll();
    expect(whileOff()).toEqual([]);
  });
});

describe('secret rotation', () => {
  it('signs with both secrets during the overlap, and with the new one alone after an immediate rotation', async () => {
    const u = await userWithKey(api.db);
    const hook = await createWebhook(u, ['post.published']);
    const rotated = await api.request<Schemas['WebhookWithSecret']>({
      method: 'POST',
      url: `/api/v1/webhooks/${hook.id}/rotate-secret?overlapSeconds=3600`,
      key: u.key,
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(hook.secret);

    const during = mark();
    const ping = await api.request<Schemas['PingEvent']>({ method: 'POST', url: `/api/v1/webhooks/${hook.id}/test`, key: u.key });
    expect(ping.status).toBe(202);
    await api.publishing.deliverAll();
    const [overlapped] = during();
    expect(overlapped?.headers['webhook-id']).toBe(ping.body.id);
    expect(overlapped?.json).toEqual(ping.body);
    expect(overlapped?.headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(overlapped && verifiedWith(overlapped, hook.secret)).toBe(true);
    expect(overlapped && verifiedWith(overlapped, rotated.body.secret)).toBe(true);

    const again = await api.request<Schemas['WebhookWithSecret']>({
      method: 'POST',
      url: `/api/v1/webhooks/${hook.id}/rotate-secret?overlapSeconds=0`,
      key: u.key,
    });
    expect(again.body.previousSecretExpiresAt).toBeNull();
    const after = mark();
    expect((await api.request({ method: 'POST', url: `/api/v1/webhooks/${hook.id}/test`, key: u.key })).status).toBe(202);
    await api.publishing.deliverAll();
    const [single] = after();
    expect(single?.headers['webhook-signature']?.split(' ')).toHaveLength(1);
    expect(single && verifiedWith(single, again.body.secret)).toBe(true);
    expect(single && verifiedWith(single, rotated.body.secret)).toBe(false);
    expect(single && verifiedWith(single, hook.secret)).toBe(false);
  });
});

describe('an event and the change it reports', () => {
  it('are committed together: a rolled-back transaction leaves no event and no delivery', async () => {
    const u = await userWithKey(api.db);
    const hook = await createWebhook(u, ['post.published']);
    const failure = new Error('rolled back on purpose');
    await expect(
      api.db.transaction().execute(async (trx) => {
        await emitPing(trx, { id: hook.id, user_id: u.userId }, new Date());
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await api.db.selectFrom('webhook_events').select('id').where('user_id', '=', u.userId).execute()).toEqual([]);
    expect(await api.db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', hook.id).execute()).toEqual([]);
    const since = mark();
    await api.publishing.deliverAll();
    expect(since()).toEqual([]);
  });
});

describe('housekeeping', () => {
  const DAY = 24 * 60 * 60_000;

  it('deletes events older than the retention (30 days) with their attempts, keeping recent ones and those still to be sent', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x', 'ada');
    const hook = await createWebhook(u, ['post.published']);
    const unsent = await createWebhook(u, ['post.failed']);
    const ping = (id: string) => api.request<Schemas['PingEvent']>({ method: 'POST', url: `/api/v1/webhooks/${id}/test`, key: u.key });
    const eventsListed = async (id: string) => (await deliveries(u, id)).map((d) => [d.eventId, d.eventType]);

    const old = (await ping(hook.id)).body;
    await api.publishing.deliverAll();
    // 31 days on, by the workers' clock: a post published now raises a recent event.
    api.publishing.runAhead(31 * DAY);
    await publishNow(api, u, { accountIds: [x], caption: 'A month on' });
    await api.publishing.drain();
    await api.publishing.deliverAll();
    const [recent] = await deliveries(u, hook.id);
    expect(recent).toMatchObject({ eventType: 'post.published', succeeded: true });
    expect(await eventsListed(hook.id)).toEqual([
      [recent?.eventId, 'post.published'],
      [old.id, 'ping'],
    ]);
    // As old as the first ping, but not sent yet.
    const waiting = (await ping(unsent.id)).body;

    expect(await api.publishing.keepHouse()).toBe(true);
    expect(await eventsListed(hook.id)).toEqual([[recent?.eventId, 'post.published']]);
    await api.publishing.deliverAll();
    expect(await eventsListed(unsent.id)).toEqual([[waiting.id, 'ping']]);
    // Sent at last, it goes at the next housekeeping.
    await api.publishing.keepHouse();
    api.publishing.runAhead(0);
    expect(await eventsListed(unsent.id)).toEqual([]);
    expect(await eventsListed(hook.id)).toEqual([[recent?.eventId, 'post.published']]);
  });
});
