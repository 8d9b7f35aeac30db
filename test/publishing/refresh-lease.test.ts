import { describe, expect, it, vi } from 'vitest';
import { REFRESH_LEASE_MS, refreshCredentials, type RefreshDeps } from '../../src/domain/publishing/token-source.js';
import { useTestApi } from '../support/api.js';
import { account, userWithKey } from '../support/fixtures.js';

/*
 * A refresh of stored credentials holds the account by a lease written on its row, not by a row
 * lock in an open transaction: a platform that never answers a refresh takes no database
 * connection, and a second refresher of the same account waits for the first one's answer.
 */

interface Tokens {
  accessToken: string;
  refreshToken: string;
}

const api = useTestApi();

/** A live account with stored tokens, as a consent would leave it. */
async function liveAccount(userId: string, name: string): Promise<string> {
  const id = await account(api.db, userId, 'x', name);
  const credentials = api.publishing.deps.vault.seal({ accessToken: `at-${name}`, refreshToken: `rt-${name}` } satisfies Tokens);
  await api.db.updateTable('accounts').set({ mode: 'live', credentials, credentials_version: 1 }).where('id', '=', id).execute();
  return id;
}

async function stored(id: string): Promise<{ tokens: Tokens; version: number; leaseId: string | null }> {
  const row = await api.db
    .selectFrom('accounts')
    .select(['credentials', 'credentials_version', 'refresh_lease_id'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return { tokens: api.publishing.deps.vault.open<Tokens>(row.credentials ?? ''), version: row.credentials_version, leaseId: row.refresh_lease_id };
}

/** A promise and the function that settles it: a platform holding a token call open until the test lets it answer. */
function gate(): { opened: Promise<void>; open(): void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const rotate = (current: Tokens): Tokens => ({ accessToken: `${current.accessToken}+`, refreshToken: `${current.refreshToken}+` });

describe('refreshing stored credentials', () => {
  it('holds no database connection while the platform does not answer: twelve hanging refreshes leave the API ready and serving', async () => {
    const owner = await userWithKey(api.db, 'Owner of slow accounts');
    const other = await userWithKey(api.db, 'Another tenant');
    const ids = await Promise.all(Array.from({ length: 12 }, (_, i) => liveAccount(owner.userId, `slow${i}`)));
    const platform = gate();
    let calls = 0;
    const refreshing = ids.map((id) =>
      refreshCredentials<Tokens>(api.publishing.deps, id, 1, async (current) => {
        calls += 1;
        await platform.opened;
        return rotate(current);
      }),
    );
    // More refreshes at the platform than the pool has connections (10): none of them holds one.
    await vi.waitFor(() => expect(calls).toBe(12), { timeout: 5000, interval: 5 });
    const ready = await api.request({ method: 'GET', url: '/health/ready' });
    expect(ready.status).toBe(200);
    const accounts = await api.request<{ data: unknown[] }>({ method: 'GET', url: '/api/v1/accounts', key: other.key });
    expect(accounts.status).toBe(200);

    platform.open();
    const refreshed = await Promise.all(refreshing);
    expect(refreshed.map((r) => r.version)).toEqual(ids.map(() => 2));
    const after = await stored(ids[0] ?? '');
    expect(after).toEqual({ tokens: { accessToken: 'at-slow0+', refreshToken: 'rt-slow0+' }, version: 2, leaseId: null });
  });

  it('makes one platform call for two refreshes of one account at once, and both use what it stored', async () => {
    const { userId } = await userWithKey(api.db);
    const id = await liveAccount(userId, 'rotating');
    const platform = gate();
    let calls = 0;
    const refresh = async (current: Tokens) => {
      calls += 1;
      await platform.opened;
      return rotate(current);
    };
    const first = refreshCredentials<Tokens>(api.publishing.deps, id, 1, refresh);
    await vi.waitFor(() => expect(calls).toBe(1), { timeout: 5000, interval: 5 });
    // The second meets the first one's lease and waits on it: no lock, no second call with the same (rotating) refresh token.
    let waits = 0;
    const second = refreshCredentials<Tokens>(
      {
        ...api.publishing.deps,
        pause: async () => {
          waits += 1;
          if (waits === 3) platform.open();
          await new Promise((resolve) => setImmediate(resolve));
        },
      },
      id,
      1,
      refresh,
    );
    const [a, b] = await Promise.all([first, second]);
    expect(calls).toBe(1);
    expect(waits).toBeGreaterThanOrEqual(3);
    expect(a).toEqual({ credentials: { accessToken: 'at-rotating+', refreshToken: 'rt-rotating+' }, version: 2 });
    expect(b).toEqual(a);
    expect(await stored(id)).toEqual({ tokens: a.credentials, version: 2, leaseId: null });
  });

  it('takes over the lease of a refresher that died once it runs out, and not before', async () => {
    const { userId } = await userWithKey(api.db);
    const id = await liveAccount(userId, 'orphaned');
    const now = new Date();
    await api.db
      .updateTable('accounts')
      .set({ refresh_lease_id: 'a-worker-that-died', refresh_lease_until: new Date(now.getTime() + REFRESH_LEASE_MS) })
      .where('id', '=', id)
      .execute();
    let offsetMs = 0;
    let waits = 0;
    const deps: RefreshDeps = {
      ...api.publishing.deps,
      now: () => new Date(now.getTime() + offsetMs),
      // The clock moves past the dead holder's lease while this refresher waits on it.
      pause: async () => {
        waits += 1;
        offsetMs = REFRESH_LEASE_MS + 1;
        await Promise.resolve();
      },
    };
    let calls = 0;
    const refreshed = await refreshCredentials<Tokens>(deps, id, 1, (current) => {
      calls += 1;
      return Promise.resolve(rotate(current));
    });
    expect(waits).toBe(1);
    expect(calls).toBe(1);
    expect(refreshed.version).toBe(2);
    expect(await stored(id)).toEqual({ tokens: { accessToken: 'at-orphaned+', refreshToken: 'rt-orphaned+' }, version: 2, leaseId: null });
  });

  it('gives the lease back when the platform refuses, storing nothing, so the next refresh does not wait', async () => {
    const { userId } = await userWithKey(api.db);
    const id = await liveAccount(userId, 'refused');
    await expect(refreshCredentials<Tokens>(api.publishing.deps, id, 1, () => Promise.reject(new Error('invalid_grant')))).rejects.toThrow('invalid_grant');
    expect(await stored(id)).toEqual({ tokens: { accessToken: 'at-refused', refreshToken: 'rt-refused' }, version: 1, leaseId: null });
    const deps: RefreshDeps = { ...api.publishing.deps, pause: () => Promise.reject(new Error('waited on a lease nobody holds')) };
    expect((await refreshCredentials<Tokens>(deps, id, 1, (current) => Promise.resolve(rotate(current)))).version).toBe(2);
  });
});
