import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { injectChecked, useTestApi } from '../support/api.js';
import { userWithKey } from '../support/fixtures.js';

// Runs only with TEST_REDIS_URL (see vitest.config.ts); CI runs Redis on 127.0.0.1:6379.
const REDIS_URL = process.env.TEST_REDIS_URL ?? '';
const api = useTestApi();
const redis = new Redis(REDIS_URL, { lazyConnect: true });

afterAll(async () => {
  await redis.quit();
});

describe('rate limits shared through Redis', () => {
  it('counts one key across two API processes: together they allow the limit, not twice it', async () => {
    const limits = { perKeyPerMinute: 5, writesPerKeyPerMinute: 5, perAddressPerMinute: 1000, consentPerAddressPerMinute: 1000 };
    // One after the other: building an app is a long synchronous stretch on a loaded machine, which
    // would outlast the other app's bounded wait for Redis, and that app would start unlimited.
    const one = await buildApp({ context: api.state, rateLimits: { limits, redisUrl: REDIS_URL } });
    const two = await buildApp({ context: api.state, rateLimits: { limits, redisUrl: REDIS_URL } });
    try {
      const u = await userWithKey(api.db);
      const statuses = [];
      for (let i = 0; i < 6; i++) {
        const res = await injectChecked(i % 2 === 0 ? one : two, { method: 'GET', url: '/api/v1/accounts', key: u.key });
        statuses.push([res.status, Number(res.headers['ratelimit-remaining'])]);
      }
      expect(statuses).toEqual([
        [200, 4],
        [200, 3],
        [200, 2],
        [200, 1],
        [200, 0],
        [429, 0],
      ]);
      // The count lives in Redis, under the key's id, for about a minute.
      const { keyId } = await api.db.selectFrom('api_keys').select('id as keyId').where('user_id', '=', u.userId).executeTakeFirstOrThrow();
      await redis.connect();
      // The plugin puts the limiter's route into the key; ours have none, hence a stray infix.
      const [stored, ...more] = await redis.keys(`herald-rate-limit:*key:${keyId}`);
      expect(more).toEqual([]);
      expect(Number(await redis.get(stored!))).toBe(6);
      const ttl = await redis.pttl(stored!);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60_000);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('keeps separate counts for separate keys in the same Redis', async () => {
    const limits = { perKeyPerMinute: 1, writesPerKeyPerMinute: 1, perAddressPerMinute: 1000, consentPerAddressPerMinute: 1000 };
    const app = await buildApp({ context: api.state, rateLimits: { limits, redisUrl: REDIS_URL } });
    try {
      for (const name of [randomUUID(), randomUUID()]) {
        const u = await userWithKey(api.db, name);
        expect((await injectChecked(app, { method: 'GET', url: '/api/v1/accounts', key: u.key })).status).toBe(200);
        expect((await injectChecked(app, { method: 'GET', url: '/api/v1/accounts', key: u.key })).status).toBe(429);
      }
    } finally {
      await app.close();
    }
  });
});
