import { describe, expect, it } from 'vitest';
import { createApiKey, hashApiKey } from '../../src/domain/api-keys.js';
import { revokeHeard, useTestApi } from '../support/api.js';
import { userWithKey } from '../support/fixtures.js';

const api = useTestApi();

describe('bearer authentication', () => {
  it('answers 401 Missing API key without an Authorization header, with WWW-Authenticate', async () => {
    const res = await api.request({ method: 'GET', url: '/api/v1/accounts' });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Missing API key', code: 'missing_api_key' });
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it('treats a header without a Bearer credential as missing', async () => {
    for (const authorization of ['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer ', 'hrld_abc']) {
      const res = await api.request({ method: 'GET', url: '/api/v1/accounts', headers: { authorization } });
      expect(res.status, authorization).toBe(401);
      expect(res.body).toEqual({ error: 'Missing API key', code: 'missing_api_key' });
    }
  });

  it('answers Invalid API key for an unknown key, and for one without the hrld_ prefix', async () => {
    for (const key of ['hrld_not-a-real-key', 'sk_live_123']) {
      const res = await api.request({ method: 'GET', url: '/api/v1/accounts', key });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Invalid API key', code: 'invalid_api_key' });
    }
  });

  it('accepts the scheme name in any case', async () => {
    const { key } = await userWithKey(api.db);
    const res = await api.request({ method: 'GET', url: '/api/v1/accounts', headers: { authorization: `bearer ${key}` } });
    expect(res.status).toBe(200);
  });

  it('answers API key expired once the expiry has passed', async () => {
    const { userId } = await userWithKey(api.db);
    const { key } = await createApiKey(api.db, userId, new Date(Date.now() - 1000));
    const res = await api.request({ method: 'GET', url: '/api/v1/posts', key });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'API key expired', code: 'api_key_expired' });
  });

  it('accepts a key whose expiry is still ahead', async () => {
    const { userId } = await userWithKey(api.db);
    const { key } = await createApiKey(api.db, userId, new Date(Date.now() + 60_000));
    expect((await api.request({ method: 'GET', url: '/api/v1/posts', key })).status).toBe(200);
  });

  it('answers Invalid API key for a revoked key', async () => {
    const { userId } = await userWithKey(api.db);
    const created = await createApiKey(api.db, userId, null);
    expect((await api.request({ method: 'GET', url: '/api/v1/accounts', key: created.key })).status).toBe(200);
    await revokeHeard(api, created.id);
    const res = await api.request({ method: 'GET', url: '/api/v1/accounts', key: created.key });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Invalid API key', code: 'invalid_api_key' });
  });

  it('checks the key before the body: no key and a bad body is 401, and nothing is written', async () => {
    const res = await api.request({ method: 'POST', url: '/api/v1/posts', body: { bogus: true } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Missing API key', code: 'missing_api_key' });
    const bad = await api.request({ method: 'POST', url: '/api/v1/posts', key: 'hrld_wrong', body: { bogus: true } });
    expect(bad.status).toBe(401);
    expect(bad.body).toEqual({ error: 'Invalid API key', code: 'invalid_api_key' });
  });

  it('requires a key on every operation', async () => {
    const calls = [
      { method: 'GET', url: '/api/v1/posts' },
      { method: 'POST', url: '/api/v1/posts' },
      { method: 'DELETE', url: '/api/v1/posts/post_00000000000000000000000000' },
      { method: 'GET', url: '/api/v1/accounts' },
    ] as const;
    for (const call of calls) {
      const res = await api.request(call);
      expect(res.status, `${call.method} ${call.url}`).toBe(401);
    }
  });

  it('stores only a SHA-256 hash of each key, never the plaintext', async () => {
    const { userId } = await userWithKey(api.db);
    const created = await createApiKey(api.db, userId, null);
    expect(created.key).toMatch(/^hrld_[A-Za-z0-9_-]{43}$/);
    const row = await api.db.selectFrom('api_keys').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(row.key_hash).toBe(hashApiKey(created.key));
    expect(JSON.stringify(row)).not.toContain(created.key);
  });
});
