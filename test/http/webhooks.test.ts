import { randomBytes } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import { describe, expect, it } from 'vitest';
import { readEnvironment } from '../../src/cli/wiring/configuration.js';
import type { Database } from '../../src/db/schema.js';
import { openWebhookSecret } from '../../src/domain/webhooks/secrets.js';
import { buildApp } from '../../src/api/app.js';
import { ServiceState } from '../../src/api/service-state.js';
import { createDependencies } from '../../src/cli/wiring/dependencies.js';
import { injectChecked, useTestApi, type InvalidRequest, type Schemas } from '../support/api.js';
import { runLogger } from '../support/run-log.js';
import { userWithKey, type TestUser } from '../support/fixtures.js';
import { stringMatching } from '../support/matchers.js';

// The webhook endpoints a caller registers: what each operation answers, and what the database
// holds afterwards. The sending of events is the delivery engine's, tested with it.

const api = useTestApi();

type Webhook = Schemas['Webhook'];
type WebhookWithSecret = Schemas['WebhookWithSecret'];
type EndpointRow = Selectable<Database['webhook_endpoints']>;

const SECRET = /^whsec_[A-Za-z0-9+/]{32}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const DAY_MS = 86_400_000;

async function createWebhook(user: TestUser, body: Record<string, unknown> = {}): Promise<WebhookWithSecret> {
  const res = await api.request<WebhookWithSecret>({
    method: 'POST',
    url: '/api/v1/webhooks',
    key: user.key,
    body: { url: 'https://example.com/hooks', eventTypes: ['post.published'], ...body },
  });
  expect(res.status).toBe(201);
  return res.body;
}

async function row(id: string): Promise<EndpointRow | undefined> {
  return api.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
}

async function endpointCount(userId: string): Promise<number> {
  return (await api.db.selectFrom('webhook_endpoints').select('id').where('user_id', '=', userId).execute()).length;
}

function open(sealed: string | null): string {
  if (sealed === null) throw new Error('no sealed secret');
  return openWebhookSecret(api.publishing.serviceDeps.vault, sealed);
}

/** Sets an endpoint disabled by Herald after failed deliveries, as the delivery engine leaves it. */
async function disableAsHerald(id: string): Promise<void> {
  await api.db
    .updateTable('webhook_endpoints')
    .set({
      enabled: false,
      disabled_reason: 'Disabled after event evt_x failed all 8 attempts',
      disabled_at: new Date('2026-01-02T03:04:05.000Z'),
      consecutive_failures: 8,
      failing_since: new Date('2026-01-01T00:00:00.000Z'),
    })
    .where('id', '=', id)
    .execute();
}

describe('POST /api/v1/webhooks', () => {
  it('registers the endpoint and shows its secret this once; the database holds it only sealed', async () => {
    const u = await userWithKey(api.db);
    const before = Date.now();
    const res = await api.request<WebhookWithSecret>({
      method: 'POST',
      url: '/api/v1/webhooks',
      key: u.key,
      body: { url: 'https://example.com/herald/events', eventTypes: ['post.failed', 'post.published', 'ping'], description: 'Production receiver' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: stringMatching(/^whk_[0-9a-hjkmnp-tv-z]{26}$/),
      url: 'https://example.com/herald/events',
      eventTypes: ['post.failed', 'post.published', 'ping'],
      description: 'Production receiver',
      enabled: true,
      disabledReason: null,
      disabledAt: null,
      consecutiveFailures: 0,
      previousSecretExpiresAt: null,
      createdAt: stringMatching(ISO),
      updatedAt: res.body.createdAt,
      secret: stringMatching(SECRET),
    });
    expect(Date.parse(res.body.createdAt)).toBeGreaterThanOrEqual(before);

    const stored = await row(res.body.id);
    expect(stored).toMatchObject({
      user_id: u.userId,
      url: 'https://example.com/herald/events',
      event_types: ['post.failed', 'post.published', 'ping'],
      previous_secret: null,
    });
    expect(stored?.secret).not.toContain(res.body.secret);
    expect(stored?.secret).not.toContain(res.body.secret.slice('whsec_'.length));
    expect(open(stored?.secret ?? null)).toBe(res.body.secret);
  });

  it('stores a missing description as null, and gives every endpoint its own secret', async () => {
    const u = await userWithKey(api.db);
    const a = await createWebhook(u);
    const b = await createWebhook(u);
    expect(a.description).toBeNull();
    expect((await row(a.id))?.description).toBeNull();
    expect(a.secret).not.toBe(b.secret);
  });

  it('refuses a body the schema does not allow, with details, and stores nothing', async () => {
    const u = await userWithKey(api.db);
    const cases: [string, Record<string, unknown>, { code: string; path: (string | number)[] }][] = [
      ['unknown event type', { url: 'https://example.com/h', eventTypes: ['post.deleted'] }, { code: 'invalid_enum_value', path: ['eventTypes', 0] }],
      ['empty eventTypes', { url: 'https://example.com/h', eventTypes: [] }, { code: 'too_small', path: ['eventTypes'] }],
      ['duplicate eventTypes', { url: 'https://example.com/h', eventTypes: ['ping', 'post.failed', 'ping'] }, { code: 'not_unique', path: ['eventTypes', 2] }],
      ['unknown field', { url: 'https://example.com/h', eventTypes: ['ping'], secret: 'whsec_mine' }, { code: 'unrecognized_keys', path: ['secret'] }],
      ['missing url', { eventTypes: ['ping'] }, { code: 'invalid_type', path: ['url'] }],
      ['empty url', { url: '', eventTypes: ['ping'] }, { code: 'too_small', path: ['url'] }],
      ['long description', { url: 'https://example.com/h', eventTypes: ['ping'], description: 'x'.repeat(501) }, { code: 'too_big', path: ['description'] }],
    ];
    for (const [name, body, detail] of cases) {
      const res = await api.request<InvalidRequest>({ method: 'POST', url: '/api/v1/webhooks', key: u.key, body });
      expect(res.status, name).toBe(400);
      expect(res.body.error, name).toBe('Invalid request');
      expect(res.body.details, name).toEqual([expect.objectContaining(detail)]);
    }
    expect(await endpointCount(u.userId)).toBe(0);
  });

  it('refuses a URL the SSRF guard would not call even on a private network, and stores nothing', async () => {
    const u = await userWithKey(api.db);
    for (const url of ['ftp://example.com/hooks', 'https://ada:hunter2@example.com/hooks', 'not a url', 'http://[::127.0.0.1]/hooks']) {
      const res = await api.request<Schemas['Error']>({ method: 'POST', url: '/api/v1/webhooks', key: u.key, body: { url, eventTypes: ['ping'] } });
      expect(res.status, url).toBe(400);
      expect(res.body.error, url).toMatch(/^URL not allowed: /);
      expect(res.body.error, url).not.toContain('hunter2');
    }
    expect(await endpointCount(u.userId)).toBe(0);
  });
});

describe('webhook URLs without HERALD_ALLOW_PRIVATE_NETWORK', () => {
  it('refuses http and private addresses on create and on update, and changes nothing', async () => {
    const env = readEnvironment({ HERALD_SECRET_KEY: randomBytes(32).toString('base64'), HERALD_DATA_DIR: api.media.root });
    const state = new ServiceState();
    state.attach({ ...(await createDependencies(env, api.db, runLogger(), api.media)), maxUploadBytes: api.media.maxUploadBytes });
    const app = await buildApp({ context: state });
    try {
      const u = await userWithKey(api.db);
      const refused = [
        'http://example.com/hooks',
        'https://127.0.0.1/hooks',
        'https://10.0.0.5/hooks',
        'https://169.254.169.254/latest',
        'https://[::1]/hooks',
        'https://[::127.0.0.1]/hooks',
      ];
      const errors: string[] = [];
      for (const url of refused) {
        const res = await injectChecked<Schemas['Error']>(app, { method: 'POST', url: '/api/v1/webhooks', key: u.key, body: { url, eventTypes: ['ping'] } });
        expect(res.status, url).toBe(400);
        expect(res.body.error, url).toMatch(/^URL not allowed: /);
        errors.push(res.body.error);
      }
      expect(errors[2]).toBe(
        'URL not allowed: 10.0.0.5 is a private address; only public addresses are allowed (set HERALD_ALLOW_PRIVATE_NETWORK=true for a private network)',
      );
      expect(await endpointCount(u.userId)).toBe(0);

      const created = await injectChecked<WebhookWithSecret>(app, {
        method: 'POST',
        url: '/api/v1/webhooks',
        key: u.key,
        body: { url: 'https://example.com/hooks', eventTypes: ['ping'] },
      });
      expect(created.status).toBe(201);
      const before = await row(created.body.id);
      for (const url of refused) {
        const res = await injectChecked<Schemas['Error']>(app, {
          method: 'PATCH',
          url: `/api/v1/webhooks/${created.body.id}`,
          key: u.key,
          body: { url, description: 'changed' },
        });
        expect(res.status, url).toBe(400);
        expect(res.body.error, url).toMatch(/^URL not allowed: /);
      }
      expect(await row(created.body.id)).toEqual(before);
    } finally {
      await app.close();
    }
  });
});

describe('GET /api/v1/webhooks and /api/v1/webhooks/{id}', () => {
  it('shows the endpoint as created, never its secret', async () => {
    const u = await userWithKey(api.db);
    const { secret, ...created } = await createWebhook(u, { description: 'mine' });
    const got = await api.request<Webhook>({ method: 'GET', url: `/api/v1/webhooks/${created.id}`, key: u.key });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created);
    const listed = await api.request<Schemas['WebhookList']>({ method: 'GET', url: '/api/v1/webhooks', key: u.key });
    expect(listed.body).toEqual({ data: [created], limit: 25, offset: 0 });
    for (const body of [got.body, listed.body]) {
      expect(JSON.stringify(body)).not.toContain(secret.slice('whsec_'.length));
      expect(JSON.stringify(body)).not.toContain('secret"');
    }
  });

  it("lists only the caller's endpoints, newest first, in pages that echo limit and offset", async () => {
    const u = await userWithKey(api.db);
    const other = await userWithKey(api.db);
    await createWebhook(other);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createWebhook(u, { description: `#${i}` })).id);
    const newestFirst = ids.reverse();
    const seen: string[] = [];
    for (let offset = 0; offset < 6; offset += 2) {
      const res = await api.request<Schemas['WebhookList']>({ method: 'GET', url: `/api/v1/webhooks?limit=2&offset=${offset}`, key: u.key });
      expect(res.body.limit).toBe(2);
      expect(res.body.offset).toBe(offset);
      seen.push(...res.body.data.map((w) => w.id));
    }
    expect(seen).toEqual(newestFirst);
    const bad = await api.request<InvalidRequest>({ method: 'GET', url: '/api/v1/webhooks?limit=101', key: u.key });
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual([expect.objectContaining({ code: 'too_big', path: ['limit'] })]);
  });

  it('orders endpoints created in the same instant by id, newest first', async () => {
    const u = await userWithKey(api.db);
    const ids = [(await createWebhook(u)).id, (await createWebhook(u)).id, (await createWebhook(u)).id];
    // The schema type forbids updating created_at; the test moves it with plain SQL.
    await sql`update webhook_endpoints set created_at = ${new Date('2026-03-01T00:00:00.000Z')} where id in (${sql.join(ids)})`.execute(api.db);
    const res = await api.request<Schemas['WebhookList']>({ method: 'GET', url: '/api/v1/webhooks', key: u.key });
    expect(res.body.data.map((w) => w.id)).toEqual([...ids].sort().reverse());
  });

  it('answers 404 for a malformed or unknown id', async () => {
    const u = await userWithKey(api.db);
    for (const id of ['nope', 'whk_', 'whk_00000000000000000000000000', 'post_00000000000000000000000000']) {
      const res = await api.request({ method: 'GET', url: `/api/v1/webhooks/${id}`, key: u.key });
      expect(res, id).toMatchObject({ status: 404, body: { error: 'Webhook not found' } });
    }
  });
});

describe('PATCH /api/v1/webhooks/{id}', () => {
  it('changes the fields sent and keeps the others', async () => {
    const u = await userWithKey(api.db);
    const { secret: _secret, ...created } = await createWebhook(u, { description: 'first', eventTypes: ['post.published', 'post.failed'] });
    const sealed = (await row(created.id))?.secret;
    const before = Date.now();
    const res = await api.request<Webhook>({ method: 'PATCH', url: `/api/v1/webhooks/${created.id}`, key: u.key, body: { url: 'https://example.org/new' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...created, url: 'https://example.org/new', updatedAt: stringMatching(ISO) });
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThanOrEqual(before);

    const types = await api.request<Webhook>({
      method: 'PATCH',
      url: `/api/v1/webhooks/${created.id}`,
      key: u.key,
      body: { eventTypes: ['target.failed'], description: null },
    });
    expect(types.body).toMatchObject({ url: 'https://example.org/new', eventTypes: ['target.failed'], description: null, enabled: true });
    const stored = await row(created.id);
    expect(stored).toMatchObject({ url: 'https://example.org/new', event_types: ['target.failed'], description: null, secret: sealed });
    expect(stored?.updated_at.toISOString()).toBe(types.body.updatedAt);
    const got = await api.request<Webhook>({ method: 'GET', url: `/api/v1/webhooks/${created.id}`, key: u.key });
    expect(got.body).toEqual(types.body);
  });

  it('turns the endpoint off as the owner: disabledAt set, no reason; turning it off again keeps that time', async () => {
    const u = await userWithKey(api.db);
    const created = await createWebhook(u);
    const before = Date.now();
    const off = await api.request<Webhook>({ method: 'PATCH', url: `/api/v1/webhooks/${created.id}`, key: u.key, body: { enabled: false } });
    expect(off.body).toMatchObject({ enabled: false, disabledReason: null, disabledAt: stringMatching(ISO) });
    expect(Date.parse(off.body.disabledAt ?? '')).toBeGreaterThanOrEqual(before);
    expect(off.body.disabledAt).toBe(off.body.updatedAt);
    const again = await api.request<Webhook>({ method: 'PATCH', url: `/api/v1/webhooks/${created.id}`, key: u.key, body: { enabled: false } });
    expect(again.body).toMatchObject({ enabled: false, disabledReason: null, disabledAt: off.body.disabledAt });
  });

  it('turns an endpoint Herald disabled on again, clearing the reason and the failure run', async () => {
    const u = await userWithKey(api.db);
    const created = await createWebhook(u);
    await disableAsHerald(created.id);
    const disabled = await api.request<Webhook>({ method: 'GET', url: `/api/v1/webhooks/${created.id}`, key: u.key });
    expect(disabled.body).toMatchObject({
      enabled: false,
      disabledReason: 'Disabled after event evt_x failed all 8 attempts',
      disabledAt: '2026-01-02T03:04:05.000Z',
      consecutiveFailures: 8,
    });

    const res = await api.request<Webhook>({ method: 'PATCH', url: `/api/v1/webhooks/${created.id}`, key: u.key, body: { enabled: true } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null, consecutiveFailures: 0 });
    expect(await row(created.id)).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null, consecutive_failures: 0, failing_since: null });
  });

  it('keeps a Herald-disabled endpoint as it is when only other fields change', async () => {
    const u = await userWithKey(api.db);
    const created = await createWebhook(u);
    await disableAsHerald(created.id);
    const res = await api.request<Webhook>({ method: 'PATCH', url: `/api/v1/webhooks/${created.id}`, key: u.key, body: { description: 'looking into it' } });
    expect(res.body).toMatchObject({
      description: 'looking into it',
      enabled: false,
      disabledReason: 'Disabled after event evt_x failed all 8 attempts',
      consecutiveFailures: 8,
    });
  });

  it('refuses an empty or invalid body with details, changing nothing', async () => {
    const u = await userWithKey(api.db);
    const created = await createWebhook(u);
    const before = await row(created.id);
    const cases: [string, Record<string, unknown>, { code: string; path: (string | number)[] }][] = [
      ['empty body', {}, { code: 'too_small', path: [] }],
      ['unknown field', { secret: 'whsec_mine' }, { code: 'unrecognized_keys', path: ['secret'] }],
      ['empty eventTypes', { eventTypes: [] }, { code: 'too_small', path: ['eventTypes'] }],
      ['unknown event type', { eventTypes: ['post.deleted'] }, { code: 'invalid_enum_value', path: ['eventTypes', 0] }],
      ['enabled not a boolean', { enabled: 'yes' }, { code: 'invalid_type', path: ['enabled'] }],
    ];
    for (const [name, body, detail] of cases) {
      const res = await api.request<InvalidRequest>({ method: 'PATCH', url: `/api/v1/webhooks/${created.id}`, key: u.key, body });
      expect(res.status, name).toBe(400);
      expect(res.body.details, name).toEqual([expect.objectContaining(detail)]);
    }
    const refused = await api.request<Schemas['Error']>({
      method: 'PATCH',
      url: `/api/v1/webhooks/${created.id}`,
      key: u.key,
      body: { url: 'gopher://example.com', enabled: false },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/^URL not allowed: /);
    expect(await row(created.id)).toEqual(before);
  });
});

describe('POST /api/v1/webhooks/{id}/rotate-secret', () => {
  it('gives a new secret; the old one signs for a day by default, kept sealed', async () => {
    const u = await userWithKey(api.db);
    const created = await createWebhook(u);
    const before = Date.now();
    const res = await api.request<WebhookWithSecret>({ method: 'POST', url: `/api/v1/webhooks/${created.id}/rotate-secret`, key: u.key });
    const after = Date.now();
    expect(res.status).toBe(200);
    expect(res.body.secret).toMatch(SECRET);
    expect(res.body.secret).not.toBe(created.secret);
    const expiresAt = Date.parse(res.body.previousSecretExpiresAt ?? '');
    expect(expiresAt).toBeGreaterThanOrEqual(before + DAY_MS);
    expect(expiresAt).toBeLessThanOrEqual(after + DAY_MS);

    const stored = await row(created.id);
    expect(open(stored?.secret ?? null)).toBe(res.body.secret);
    expect(open(stored?.previous_secret ?? null)).toBe(created.secret);
    expect(stored?.previous_secret).not.toContain(created.secret.slice('whsec_'.length));
    expect(stored?.previous_secret_expires_at?.toISOString()).toBe(res.body.previousSecretExpiresAt);

    const got = await api.request<Webhook>({ method: 'GET', url: `/api/v1/webhooks/${created.id}`, key: u.key });
    const { secret: _secret, ...view } = res.body;
    expect(got.body).toEqual(view);
  });

  it('takes overlapSeconds; 0 retires the old secret at once', async () => {
    const u = await userWithKey(api.db);
    const created = await createWebhook(u);
    const before = Date.now();
    const week = await api.request<WebhookWithSecret>({
      method: 'POST',
      url: `/api/v1/webhooks/${created.id}/rotate-secret?overlapSeconds=604800`,
      key: u.key,
    });
    expect(Date.parse(week.body.previousSecretExpiresAt ?? '')).toBeGreaterThanOrEqual(before + 7 * DAY_MS);

    const now = await api.request<WebhookWithSecret>({ method: 'POST', url: `/api/v1/webhooks/${created.id}/rotate-secret?overlapSeconds=0`, key: u.key });
    expect(now.status).toBe(200);
    expect(now.body.previousSecretExpiresAt).toBeNull();
    const stored = await row(created.id);
    expect(stored).toMatchObject({ previous_secret: null, previous_secret_expires_at: null });
    expect(open(stored?.secret ?? null)).toBe(now.body.secret);
  });

  it('rotating during an overlap keeps only the secret it replaces', async () => {
    const u = await userWithKey(api.db);
    const created = await createWebhook(u);
    const first = await api.request<WebhookWithSecret>({ method: 'POST', url: `/api/v1/webhooks/${created.id}/rotate-secret?overlapSeconds=3600`, key: u.key });
    const second = await api.request<WebhookWithSecret>({ method: 'POST', url: `/api/v1/webhooks/${created.id}/rotate-secret?overlapSeconds=60`, key: u.key });
    const stored = await row(created.id);
    expect(open(stored?.secret ?? null)).toBe(second.body.secret);
    expect(open(stored?.previous_secret ?? null)).toBe(first.body.secret);
    expect(new Set([created.secret, first.body.secret, second.body.secret]).size).toBe(3);
  });

  it('no longer mentions a previous secret once it has expired', async () => {
    const u = await userWithKey(api.db);
    const created = await createWebhook(u);
    await api.request({ method: 'POST', url: `/api/v1/webhooks/${created.id}/rotate-secret`, key: u.key });
    await api.db
      .updateTable('webhook_endpoints')
      .set({ previous_secret_expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', created.id)
      .execute();
    const got = await api.request<Webhook>({ method: 'GET', url: `/api/v1/webhooks/${created.id}`, key: u.key });
    expect(got.body.previousSecretExpiresAt).toBeNull();
    const listed = await api.request<Schemas['WebhookList']>({ method: 'GET', url: '/api/v1/webhooks', key: u.key });
    expect(listed.body.data[0]?.previousSecretExpiresAt).toBeNull();
  });

  it('refuses overlapSeconds out of range or not an integer, rotating nothing', async () => {
    const u = await userWithKey(api.db);
    const created = await createWebhook(u);
    const before = await row(created.id);
    const cases: [string, string][] = [
      ['overlapSeconds=-1', 'too_small'],
      ['overlapSeconds=604801', 'too_big'],
      ['overlapSeconds=1.5', 'invalid_type'],
      ['overlapSeconds=day', 'invalid_type'],
    ];
    for (const [query, code] of cases) {
      const res = await api.request<InvalidRequest>({ method: 'POST', url: `/api/v1/webhooks/${created.id}/rotate-secret?${query}`, key: u.key });
      expect(res.status, query).toBe(400);
      expect(res.body.details, query).toEqual([expect.objectContaining({ code, path: ['overlapSeconds'] })]);
    }
    expect(await row(created.id)).toEqual(before);
  });
});

describe('a secret in an answer kept for an Idempotency-Key', () => {
  it('is kept only sealed, and a retry with the same key shows the same secret again, doing nothing twice', async () => {
    const u = await userWithKey(api.db);
    const send = (url: string, body?: object) =>
      api.request<WebhookWithSecret>({
        method: 'POST',
        url,
        key: u.key,
        headers: { 'idempotency-key': 'lost-answer' },
        ...(body === undefined ? {} : { body }),
      });
    const body = { url: 'https://example.com/hooks', eventTypes: ['post.published'] };
    const created = await send('/api/v1/webhooks', body);
    expect(created.status).toBe(201);
    const rotated = await send(`/api/v1/webhooks/${created.body.id}/rotate-secret`);
    expect(rotated.status).toBe(200);

    // Every column of every key the caller holds, as the database shows it: no secret in clear.
    const kept = await sql<{ row: string }>`select k::text as row from idempotency_keys k where user_id = ${u.userId}`.execute(api.db);
    expect(kept.rows).toHaveLength(2);
    for (const { row: text } of kept.rows) {
      expect(text).not.toContain('whsec_');
      for (const secret of [created.body.secret, rotated.body.secret]) expect(text).not.toContain(secret.slice('whsec_'.length));
    }

    const createdAgain = await send('/api/v1/webhooks', body);
    expect([createdAgain.status, createdAgain.headers['idempotency-replayed']]).toEqual([201, 'true']);
    expect(createdAgain.body).toEqual(created.body);
    const rotatedAgain = await send(`/api/v1/webhooks/${created.body.id}/rotate-secret`);
    expect([rotatedAgain.status, rotatedAgain.headers['idempotency-replayed']]).toEqual([200, 'true']);
    expect(rotatedAgain.body).toEqual(rotated.body);

    expect(await endpointCount(u.userId)).toBe(1);
    const stored = await row(created.body.id);
    expect(open(stored?.secret ?? null)).toBe(rotated.body.secret);
    expect(open(stored?.previous_secret ?? null)).toBe(created.body.secret);
  });
});

/** Records an event with one delivery to the endpoint and the given attempts, as the delivery engine would. */
async function deliveryWithAttempts(endpointId: string, userId: string, attempts: { attempt: number; at: string; succeeded: boolean }[]): Promise<string> {
  const eventId = `evt_${randomBytes(8).toString('hex')}`;
  const deliveryId = `dlv_${randomBytes(8).toString('hex')}`;
  await api.db.insertInto('webhook_events').values({ id: eventId, user_id: userId, type: 'post.failed', body: '{}' }).execute();
  await api.db
    .insertInto('webhook_deliveries')
    .values({ id: deliveryId, event_id: eventId, endpoint_id: endpointId, state: 'failed', attempts: attempts.length })
    .execute();
  for (const a of attempts) {
    await api.db
      .insertInto('webhook_attempts')
      .values({
        delivery_id: deliveryId,
        attempt: a.attempt,
        endpoint_id: endpointId,
        event_id: eventId,
        event_type: 'post.failed',
        attempted_at: new Date(a.at),
        succeeded: a.succeeded,
        status_code: a.succeeded ? 204 : 503,
        latency_ms: 12,
        error: a.succeeded ? null : 'The endpoint answered 503',
        response_excerpt: a.succeeded ? null : 'upstream unavailable',
        next_attempt_at: a.succeeded ? null : new Date(Date.parse(a.at) + 10_000),
      })
      .execute();
  }
  return eventId;
}

describe('DELETE /api/v1/webhooks/{id}', () => {
  it('deletes the endpoint with its deliveries and attempts', async () => {
    const u = await userWithKey(api.db);
    const created = await createWebhook(u);
    const kept = await createWebhook(u);
    await deliveryWithAttempts(created.id, u.userId, [{ attempt: 1, at: '2026-02-01T00:00:00.000Z', succeeded: false }]);
    await deliveryWithAttempts(kept.id, u.userId, [{ attempt: 1, at: '2026-02-01T00:00:00.000Z', succeeded: true }]);
    const res = await api.request({ method: 'DELETE', url: `/api/v1/webhooks/${created.id}`, key: u.key });
    expect(res).toMatchObject({ status: 200, body: { success: true } });
    expect(await row(created.id)).toBeUndefined();
    expect(await api.db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', created.id).execute()).toEqual([]);
    expect(await api.db.selectFrom('webhook_attempts').select('attempt').where('endpoint_id', '=', created.id).execute()).toEqual([]);
    expect(await api.db.selectFrom('webhook_attempts').select('attempt').where('endpoint_id', '=', kept.id).execute()).toHaveLength(1);
    const again = await api.request({ method: 'DELETE', url: `/api/v1/webhooks/${created.id}`, key: u.key });
    expect(again).toMatchObject({ status: 404, body: { error: 'Webhook not found' } });
    expect(await api.request({ method: 'GET', url: `/api/v1/webhooks/${created.id}`, key: u.key })).toMatchObject({ status: 404 });
  });
});

describe('POST /api/v1/webhooks/{id}/test', () => {
  it('records a ping with one delivery to this endpoint, due at once, and answers with the event', async () => {
    const u = await userWithKey(api.db);
    const created = await createWebhook(u, { eventTypes: ['post.failed'] });
    const before = Date.now();
    const res = await api.request<Schemas['PingEvent']>({ method: 'POST', url: `/api/v1/webhooks/${created.id}/test`, key: u.key });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      id: stringMatching(/^evt_/),
      type: 'ping',
      timestamp: stringMatching(ISO),
      data: { webhookId: created.id, message: 'A test event from Herald; answer with a 2xx status.' },
    });
    expect(Date.parse(res.body.timestamp)).toBeGreaterThanOrEqual(before);

    const event = await api.db.selectFrom('webhook_events').selectAll().where('id', '=', res.body.id).executeTakeFirst();
    expect(event).toMatchObject({ user_id: u.userId, type: 'ping' });
    expect(JSON.parse(event?.body ?? '')).toEqual(res.body);
    const deliveries = await api.db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', res.body.id).execute();
    expect(deliveries).toEqual([expect.objectContaining({ endpoint_id: created.id, state: 'pending', due_at: new Date(res.body.timestamp) })]);
  });

  it('pings a disabled endpoint too, leaving it disabled', async () => {
    const u = await userWithKey(api.db);
    const created = await createWebhook(u);
    await disableAsHerald(created.id);
    const res = await api.request<Schemas['PingEvent']>({ method: 'POST', url: `/api/v1/webhooks/${created.id}/test`, key: u.key });
    expect(res.status).toBe(202);
    expect(await api.db.selectFrom('webhook_deliveries').select('endpoint_id').where('event_id', '=', res.body.id).execute()).toEqual([
      { endpoint_id: created.id },
    ]);
    expect(await row(created.id)).toMatchObject({ enabled: false, consecutive_failures: 8 });
  });
});

describe('GET /api/v1/webhooks/{id}/deliveries', () => {
  it("lists the endpoint's attempts newest first, in pages", async () => {
    const u = await userWithKey(api.db);
    const created = await createWebhook(u);
    const other = await createWebhook(u);
    const first = await deliveryWithAttempts(created.id, u.userId, [
      { attempt: 1, at: '2026-02-01T10:00:01.118Z', succeeded: false },
      { attempt: 2, at: '2026-02-01T10:00:12.402Z', succeeded: true },
    ]);
    const second = await deliveryWithAttempts(created.id, u.userId, [{ attempt: 1, at: '2026-02-01T11:00:00.000Z', succeeded: false }]);
    await deliveryWithAttempts(other.id, u.userId, [{ attempt: 1, at: '2026-02-01T12:00:00.000Z', succeeded: true }]);

    const res = await api.request<Schemas['WebhookDeliveryList']>({ method: 'GET', url: `/api/v1/webhooks/${created.id}/deliveries`, key: u.key });
    expect(res.status).toBe(200);
    expect(res.body.limit).toBe(25);
    expect(res.body.offset).toBe(0);
    expect(res.body.data.map((d) => [d.eventId, d.attempt])).toEqual([
      [second, 1],
      [first, 2],
      [first, 1],
    ]);
    expect(res.body.data[2]).toEqual({
      eventId: first,
      eventType: 'post.failed',
      attempt: 1,
      attemptedAt: '2026-02-01T10:00:01.118Z',
      succeeded: false,
      statusCode: 503,
      latencyMs: 12,
      error: 'The endpoint answered 503',
      responseExcerpt: 'upstream unavailable',
      nextAttemptAt: '2026-02-01T10:00:11.118Z',
    });
    expect(res.body.data[1]).toMatchObject({ succeeded: true, statusCode: 204, error: null, responseExcerpt: null, nextAttemptAt: null });

    const page = await api.request<Schemas['WebhookDeliveryList']>({
      method: 'GET',
      url: `/api/v1/webhooks/${created.id}/deliveries?limit=1&offset=1`,
      key: u.key,
    });
    expect(page.body).toMatchObject({ limit: 1, offset: 1 });
    expect(page.body.data.map((d) => [d.eventId, d.attempt])).toEqual([[first, 2]]);
    const past = await api.request<Schemas['WebhookDeliveryList']>({ method: 'GET', url: `/api/v1/webhooks/${created.id}/deliveries?offset=3`, key: u.key });
    expect(past.body.data).toEqual([]);
  });

  it('lists nothing for an endpoint nothing was sent to', async () => {
    const u = await userWithKey(api.db);
    const created = await createWebhook(u);
    const res = await api.request<Schemas['WebhookDeliveryList']>({ method: 'GET', url: `/api/v1/webhooks/${created.id}/deliveries`, key: u.key });
    expect(res.body).toEqual({ data: [], limit: 25, offset: 0 });
  });
});

describe("another user's endpoint", () => {
  it('is not found by any operation, and stays as it was', async () => {
    const ada = await userWithKey(api.db, 'Ada');
    const bob = await userWithKey(api.db, 'Bob');
    const created = await createWebhook(ada);
    await deliveryWithAttempts(created.id, ada.userId, [{ attempt: 1, at: '2026-02-01T00:00:00.000Z', succeeded: true }]);
    const before = await row(created.id);
    const base = `/api/v1/webhooks/${created.id}`;
    const requests = [
      { method: 'GET', url: base },
      { method: 'PATCH', url: base, body: { enabled: false } },
      { method: 'DELETE', url: base },
      { method: 'POST', url: `${base}/rotate-secret` },
      { method: 'POST', url: `${base}/test` },
      { method: 'GET', url: `${base}/deliveries` },
    ] as const;
    for (const req of requests) {
      const res = await api.request({ ...req, key: bob.key });
      expect(res, `${req.method} ${req.url}`).toMatchObject({ status: 404, body: { error: 'Webhook not found' } });
    }
    expect(await row(created.id)).toEqual(before);
    expect(await api.db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', created.id).execute()).toHaveLength(1);
    const listed = await api.request<Schemas['WebhookList']>({ method: 'GET', url: '/api/v1/webhooks', key: bob.key });
    expect(listed.body.data).toEqual([]);
    expect((await api.request({ method: 'GET', url: base, key: ada.key })).status).toBe(200);
  });
});
