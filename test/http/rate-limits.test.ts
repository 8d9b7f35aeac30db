import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import type { RateLimits } from '../../src/api/rate-limits.js';
import { injectChecked, useTestApi, type ApiRequest } from '../support/api.js';
import { account, postCount, userWithKey } from '../support/fixtures.js';

const api = useTestApi();
const LIMITS: RateLimits = { perKeyPerMinute: 6, writesPerKeyPerMinute: 3, perAddressPerMinute: 4, consentPerAddressPerMinute: 8 };

/** An app of its own per test, so each starts with full buckets (inject always comes from 127.0.0.1). */
const apps: FastifyInstance[] = [];
async function limitedApp(limits = LIMITS, redisUrl?: string): Promise<(req: ApiRequest) => ReturnType<typeof injectChecked>> {
  const app = await buildApp({ context: api.state, rateLimits: { limits, redisUrl } });
  apps.push(app);
  return (req) => injectChecked(app, req);
}
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

const limitHeaders = (res: { headers: Record<string, unknown> }) => [res.headers['ratelimit-limit'], res.headers['ratelimit-remaining']].map(Number);

describe('rate limits per API key', () => {
  it('counts every request of a key, says so in the RateLimit-* headers, and refuses the one over the limit with 429 and Retry-After', async () => {
    const call = await limitedApp();
    const u = await userWithKey(api.db);
    const other = await userWithKey(api.db);
    const seen = [];
    for (let i = 0; i < 6; i++) {
      const res = await call({ method: 'GET', url: '/api/v1/accounts', key: u.key });
      expect(res.status).toBe(200);
      seen.push(limitHeaders(res));
      expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThan(0);
    }
    expect(seen).toEqual([6, 5, 4, 3, 2, 1].map((left) => [6, left - 1]));
    const over = await call({ method: 'GET', url: '/api/v1/accounts', key: u.key });
    expect(over.status).toBe(429);
    expect(over.body).toEqual({ error: 'Rate limit exceeded', code: 'rate_limited' });
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(over.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(limitHeaders(over)).toEqual([6, 0]);
    // Another key has its own bucket.
    const theirs = await call({ method: 'GET', url: '/api/v1/accounts', key: other.key });
    expect(theirs.status).toBe(200);
    expect(limitHeaders(theirs)).toEqual([6, 5]);
  });

  it('gives writes a tighter bucket: the write over it is refused and writes nothing, while reads go on', async () => {
    const call = await limitedApp();
    const u = await userWithKey(api.db);
    const acc = await account(api.db, u.userId);
    const create = () => call({ method: 'POST', url: '/api/v1/posts', key: u.key, body: { accountIds: [acc], caption: 'Limited' } });
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await create());
    expect(answers.map((r) => [r.status, ...limitHeaders(r)])).toEqual([
      [201, 3, 2],
      [201, 3, 1],
      [201, 3, 0],
    ]);
    const over = await create();
    expect(over.status).toBe(429);
    expect(over.body).toEqual({ error: 'Rate limit exceeded', code: 'rate_limited' });
    expect(await postCount(api.db, u.userId)).toBe(3);
    // The read bucket still has room; its headers show the general bucket again.
    const read = await call({ method: 'GET', url: '/api/v1/posts', key: u.key });
    expect(read.status).toBe(200);
    expect(limitHeaders(read)).toEqual([6, 1]);
  });
});

describe('rate limits per address, for requests without a valid key', () => {
  it('counts every 401 per address and answers 429 for failed keys past the limit, never for a valid key', async () => {
    const call = await limitedApp();
    const u = await userWithKey(api.db);
    const guesses = [];
    for (let i = 0; i < 4; i++) guesses.push(await call({ method: 'GET', url: '/api/v1/posts', key: `hrld_guess${i}` }));
    expect(guesses.map((r) => [r.status, ...limitHeaders(r)])).toEqual([
      [401, 4, 3],
      [401, 4, 2],
      [401, 4, 1],
      [401, 4, 0],
    ]);
    const over = await call({ method: 'GET', url: '/api/v1/posts', key: 'hrld_guess5' });
    expect(over).toMatchObject({ status: 429, body: { error: 'Rate limit exceeded' } });
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await call({ method: 'GET', url: '/api/v1/posts' })).status).toBe(429);
    // A valid key from the same address, and the public pages, are counted apart.
    const valid = await call({ method: 'GET', url: '/api/v1/posts', key: u.key });
    expect([valid.status, ...limitHeaders(valid)]).toEqual([200, 6, 5]);
    expect((await call({ method: 'GET', url: '/openapi.json' })).status).toBe(200);
  });

  it('counts the public pages and unknown paths per address, and never refuses a valid key for them', async () => {
    const call = await limitedApp();
    const u = await userWithKey(api.db);
    expect(limitHeaders(await call({ method: 'GET', url: '/openapi.json' }))).toEqual([4, 3]);
    expect(limitHeaders(await call({ method: 'GET', url: '/openapi.yaml' }))).toEqual([4, 2]);
    const unknown = await call({ method: 'GET', url: '/nothing-here' });
    expect([unknown.status, ...limitHeaders(unknown)]).toEqual([404, 4, 1]);
    // A path Fastify refuses before routing it (not UTF-8 once decoded) counts too.
    const malformed = await call({ method: 'DELETE', url: '/api/v1/posts/%E0%A4%A' });
    expect([malformed.status, ...limitHeaders(malformed)]).toEqual([404, 4, 0]);
    expect((await call({ method: 'GET', url: '/openapi.json' })).status).toBe(429);
    expect((await call({ method: 'DELETE', url: '/api/v1/posts/%E0%A4%A' })).status).toBe(429);
    // Sixty fetches of /openapi.json from behind one proxy must not lock its users out.
    for (let i = 0; i < 3; i++) {
      const valid = await call({ method: 'GET', url: '/api/v1/accounts', key: u.key });
      expect([valid.status, ...limitHeaders(valid)]).toEqual([200, 6, 5 - i]);
    }
    // Failed keys have a bucket of their own, still full.
    expect((await call({ method: 'GET', url: '/api/v1/accounts', key: 'hrld_guess' })).status).toBe(401);
  });

  it('counts the consent pages in their own, larger bucket: people coming back from a platform are not refused with the public pages, and do not spend them', async () => {
    const call = await limitedApp({ ...LIMITS, perAddressPerMinute: 1 });
    expect((await call({ method: 'GET', url: '/openapi.json' })).status).toBe(200);
    expect((await call({ method: 'GET', url: '/openapi.json' })).status).toBe(429);
    for (let i = 0; i < 8; i++) {
      const back = await call({ method: 'GET', url: `/oauth/callback?state=unknown-${i}&code=c` });
      expect([back.status, ...limitHeaders(back)]).toEqual([400, 8, 7 - i]);
    }
    const link = await call({ method: 'GET', url: '/oauth/start/unknown' });
    expect(link.status).toBe(429);
    expect(Number(link.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('never limits the health checks, and they carry no RateLimit-* headers', async () => {
    const call = await limitedApp({ ...LIMITS, perAddressPerMinute: 1 });
    expect((await call({ method: 'GET', url: '/openapi.json' })).status).toBe(200);
    expect((await call({ method: 'GET', url: '/openapi.json' })).status).toBe(429);
    for (let i = 0; i < 5; i++) {
      const live = await call({ method: 'GET', url: '/health/live' });
      expect(live.status).toBe(200);
      expect(live.headers['ratelimit-limit']).toBeUndefined();
      expect((await call({ method: 'GET', url: '/health/ready' })).status).toBe(200);
    }
  });
});

describe('a rate-limit store that does not answer', () => {
  it('serves requests unlimited rather than refusing them, and quickly', async () => {
    // Nothing listens on port 1: every Redis command fails at once.
    const call = await limitedApp({ ...LIMITS, perKeyPerMinute: 1 }, 'redis://127.0.0.1:1');
    const u = await userWithKey(api.db);
    for (let i = 0; i < 3; i++) expect((await call({ method: 'GET', url: '/api/v1/accounts', key: u.key })).status).toBe(200);
  });
});
