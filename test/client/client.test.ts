import { beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createHeraldClient, type HeraldClient, type HeraldSchemas } from '../../clients/typescript/src/index.js';
import { expectMatchesSpec } from '../support/contract.js';
import { useDemoServer } from '../support/server.js';

// @herald/client against the real server on 127.0.0.1 (embedded database, or Postgres when
// TEST_DATABASE_URL is set), seeded with the demo user. Every response is also checked against
// the spec, and the types asserted here are checked by `tsc` (npm run typecheck).
const running = useDemoServer();
let herald: HeraldClient;

/** Each request is bounded in time, and its response checked against the spec. */
function clientFor(apiKey: string): HeraldClient {
  const client = createHeraldClient({
    baseUrl: running.server.url,
    apiKey,
    fetch: (request) => fetch(request, { signal: AbortSignal.timeout(10_000) }),
  });
  client.use({
    async onResponse({ request, response }) {
      const url = new URL(request.url);
      const text = await response.clone().text();
      expectMatchesSpec({
        method: request.method,
        url: url.pathname + url.search,
        status: response.status,
        headers: Object.fromEntries(response.headers),
        body: text === '' ? undefined : JSON.parse(text),
      });
    },
  });
  return client;
}

function demoAccount(platform: string): string {
  const account = running.demo.accounts.find((a) => a.platform === platform);
  if (!account) throw new Error(`the demo has no ${platform} account`);
  return account.id;
}

beforeAll(() => {
  herald = clientFor(running.demo.key);
});

describe('@herald/client', () => {
  it('lists the connected accounts', async () => {
    const { data, error, response } = await herald.GET('/api/v1/accounts');
    expect(error).toBeUndefined();
    expect(response.status).toBe(200);
    expectTypeOf(data).toEqualTypeOf<HeraldSchemas['AccountList'] | undefined>();
    expect(data?.data.map((a) => a.platform)).toEqual(['x', 'instagram', 'linkedin']);
    expect(data?.data.map((a) => a.id)).toEqual(running.demo.accounts.map((a) => a.id));
  });

  it('schedules a cross-post, lists it, and deletes it', async () => {
    const x = demoAccount('x');
    const linkedin = demoAccount('linkedin');
    const created = await herald.POST('/api/v1/posts', {
      body: {
        accountIds: [x, linkedin],
        caption: 'Our new release is out. Read the notes on our blog.',
        accountOverrides: [{ accountId: x, captionOverride: 'New release out now.' }],
        scheduledAt: '2099-01-01T09:00:00+02:00',
      },
    });
    expect(created.error).toBeUndefined();
    expect(created.response.status).toBe(201);
    expectTypeOf(created.data).toEqualTypeOf<HeraldSchemas['PostCreateResult'] | undefined>();
    const id = created.data?.id ?? '';
    expect(created.data?.status).toBe('scheduled');
    expect(id).toMatch(/^post_/);

    const listed = await herald.GET('/api/v1/posts', { params: { query: { limit: 5, offset: 0 } } });
    expect(listed.response.status).toBe(200);
    expect(listed.data?.limit).toBe(5);
    const post = listed.data?.data.find((p) => p.id === id);
    expect(post).toMatchObject({ status: 'scheduled', scheduledAt: '2099-01-01T07:00:00.000Z', userId: running.demo.userId });
    expectTypeOf<NonNullable<typeof post>['status']>().toEqualTypeOf<'draft' | 'scheduled' | 'publishing' | 'published' | 'partial' | 'failed'>();

    const deleted = await herald.DELETE('/api/v1/posts/{id}', { params: { path: { id } } });
    expect(deleted.response.status).toBe(200);
    expect(deleted.data).toEqual({ success: true });

    const after = await herald.GET('/api/v1/posts', { params: { query: { limit: 100 } } });
    expect(after.data?.data.map((p) => p.id)).not.toContain(id);

    const again = await herald.DELETE('/api/v1/posts/{id}', { params: { path: { id } } });
    expect(again.response.status).toBe(404);
    expect(again.error).toEqual({ error: 'Post not found', code: 'post_not_found' });
  });

  it('types a refused key as the spec’s Error body (401)', async () => {
    const stranger = clientFor('hrld_not-a-real-key');
    const { data, error, response } = await stranger.GET('/api/v1/accounts');
    expect(data).toBeUndefined();
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    expectTypeOf(error).toEqualTypeOf<HeraldSchemas['Error'] | undefined>();
    expect(error).toEqual({ error: 'Invalid API key', code: 'invalid_api_key' });
  });

  it('types a validation error with its details (400)', async () => {
    const { data, error, response } = await herald.POST('/api/v1/posts', {
      body: { accountIds: [demoAccount('x')], caption: 'Too late', scheduledAt: '2020-01-01T00:00:00Z' },
    });
    expect(data).toBeUndefined();
    expect(response.status).toBe(400);
    expect(error?.error).toBe('Invalid request');
    expectTypeOf(error?.details).toEqualTypeOf<HeraldSchemas['ErrorDetail'][] | undefined>();
    expect(error?.details?.map((d) => [d.code, d.path])).toEqual([['too_small', ['scheduledAt']]]);
  });

  it('refuses to build a client without a key or with a bad base URL', () => {
    expect(() => createHeraldClient({ baseUrl: running.server.url, apiKey: '' })).toThrow(/apiKey is required/);
    expect(() => createHeraldClient({ baseUrl: '127.0.0.1:3000', apiKey: 'hrld_x' })).toThrow(/baseUrl/);
  });
});
