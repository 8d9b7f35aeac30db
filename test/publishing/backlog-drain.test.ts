import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApi, type Schemas } from '../support/api.js';
import { userWithKey, type TestUser } from '../support/fixtures.js';
import { startMastodonFake, type MastodonFake } from '../support/mastodon-fake.js';
import { createPost } from '../support/posts.js';

// After an outage, a backlog of overdue posts on live accounts: each account is sent its posts no
// closer together than the live spacing (by Herald's clock, which paces them), and the accounts
// with a post or two are not held behind the one with many (what the Mastodon fake received).
const SPACING_MS = 150;
const BACKLOG = 24;
const api = useTestApi();
let mastodon: MastodonFake;

beforeAll(async () => {
  mastodon = await startMastodonFake();
  // This file's workers space live posts (the other tests' do not) and publish a post however late.
  Object.assign(api.publishing.deps.settings, { liveSpacingMs: SPACING_MS, maxLatenessMs: 24 * 3_600_000 });
});
afterAll(async () => {
  await mastodon?.close();
});

async function connect(u: TestUser, username: string): Promise<{ account: Schemas['Account']; instanceId: string }> {
  const who = mastodon.addAccount(username);
  const res = await api.request<Schemas['Account']>({
    method: 'POST',
    url: '/api/v1/accounts',
    key: u.key,
    body: { platform: 'mastodon', credentials: { instance: mastodon.url, accessToken: who.token } },
  });
  expect(res.status).toBe(201);
  return { account: res.body, instanceId: who.id };
}

describe('a backlog of overdue posts on live accounts', () => {
  it('drains at each account’s spacing, and the other accounts’ posts go out without waiting behind it', async () => {
    const u = await userWithKey(api.db);
    const busy = await connect(u, 'busy');
    const quiet = [await connect(u, 'quiet1'), await connect(u, 'quiet2')];
    const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
    for (let i = 0; i < BACKLOG; i++) await createPost(api, u, { accountIds: [busy.account.id], caption: `Backlog ${i}`, scheduledAt: inAnHour });
    for (const { account } of quiet) await createPost(api, u, { accountIds: [account.id], caption: `Quiet ${account.username}`, scheduledAt: inAnHour });
    // The outage: every post came due ten minutes ago, the busy account's first.
    const due = new Date(Date.now() - 10 * 60_000);
    await api.db.updateTable('posts').set({ scheduled_at: due, next_check_at: due }).where('user_id', '=', u.userId).execute();

    await api.publishing.drain();

    const times = (instanceId: string) => mastodon.statuses.filter((s) => s.accountId === instanceId).map((s) => Date.parse(s.createdAt));
    const busyTimes = times(busy.instanceId);
    expect(busyTimes).toHaveLength(BACKLOG);
    // When Herald sent each of the busy account's posts (its pacing clock): never closer than the spacing.
    const sent = await api.db
      .selectFrom('post_targets')
      .select('first_attempt_at')
      .where('account_id', '=', busy.account.id)
      .orderBy('first_attempt_at')
      .execute();
    const sentAt = sent.map((row) => row.first_attempt_at?.getTime() ?? 0);
    expect(sentAt).toHaveLength(BACKLOG);
    expect(Math.min(...sentAt.slice(1).map((t, i) => t - (sentAt[i] ?? 0)))).toBeGreaterThanOrEqual(SPACING_MS);
    for (const { instanceId } of quiet) {
      const [only, ...more] = times(instanceId);
      expect(more).toEqual([]);
      // Out before the busy account's third post: not behind its backlog.
      expect(only).toBeLessThan(busyTimes[2] ?? 0);
    }
  }, 60_000);
});
