import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApiKey, hashApiKey } from '../../src/domain/api-keys.js';
import { revokeHeard, useTestApi } from '../support/api.js';
import { userWithKey } from '../support/fixtures.js';
import { noteSecret } from '../support/run-log.js';

const api = useTestApi();

afterEach(() => {
  vi.restoreAllMocks();
});

const accounts = (key: string) => api.request({ method: 'GET', url: '/api/v1/accounts', key });

describe('the key lookup cache', () => {
  it('keeps a looked-up key for a second: a change the database does not announce is seen only after it', async () => {
    const { userId } = await userWithKey(api.db);
    const made = await createApiKey(api.db, userId, null);
    noteSecret(made.key);
    expect((await accounts(made.key)).status).toBe(200);
    // Revoked behind the announcement's back (triggers off for this transaction): only the cache still accepts the key.
    await api.db.transaction().execute(async (tx) => {
      await sql`set local session_replication_role = replica`.execute(tx);
      await tx.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', made.id).execute();
    });
    expect((await accounts(made.key)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const res = await accounts(made.key);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Invalid API key', code: 'invalid_api_key' });
  });

  it('refuses a cached key at the first request after its revocation is announced, every time', async () => {
    const { userId } = await userWithKey(api.db);
    for (let i = 0; i < 10; i++) {
      const made = await createApiKey(api.db, userId, null);
      noteSecret(made.key);
      expect((await accounts(made.key)).status).toBe(200);
      expect((await accounts(made.key)).status).toBe(200);
      await revokeHeard(api, made.id);
      const res = await accounts(made.key);
      expect(res.status, `revocation ${i}`).toBe(401);
      expect(res.body).toEqual({ error: 'Invalid API key', code: 'invalid_api_key' });
    }
  });

  it('answers requests that arrive together with a key not yet cached, and refuses them all together once it is revoked', async () => {
    const { userId } = await userWithKey(api.db);
    const made = await createApiKey(api.db, userId, null);
    noteSecret(made.key);
    const together = async () => (await Promise.all(Array.from({ length: 20 }, () => accounts(made.key)))).map((res) => res.status);
    expect(await together()).toEqual(Array(20).fill(200));
    await revokeHeard(api, made.id);
    expect(await together()).toEqual(Array(20).fill(401));
  });

  it('refuses a cached key as soon as its expiry passes', async () => {
    const { userId } = await userWithKey(api.db);
    const expiresAt = new Date(Date.now() + 60_000);
    const made = await createApiKey(api.db, userId, expiresAt);
    noteSecret(made.key);
    expect((await accounts(made.key)).status).toBe(200);
    vi.spyOn(api.state, 'now').mockReturnValue(new Date(expiresAt.getTime() + 1));
    const res = await accounts(made.key);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'API key expired', code: 'api_key_expired' });
  });

  it('keeps refusing an unknown key that is then created, never caching a miss', async () => {
    const { userId } = await userWithKey(api.db);
    const made = await createApiKey(api.db, userId, null);
    noteSecret(made.key);
    await api.db.deleteFrom('api_keys').where('id', '=', made.id).execute();
    expect((await accounts(made.key)).status).toBe(401);
    await api.db
      .insertInto('api_keys')
      .values({ id: made.id, user_id: userId, key_hash: hashApiKey(made.key), expires_at: null })
      .execute();
    expect((await accounts(made.key)).status).toBe(200);
  });
});
