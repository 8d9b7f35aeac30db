import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker } from '../../src/worker/worker.js';
import { useTestApi } from '../support/api.js';
import { userWithKey, type TestUser } from '../support/fixtures.js';
import { connectMastodon } from '../support/mastodon-accounts.js';
import { startMastodonFake, type MastodonFake } from '../support/mastodon-fake.js';
import { createPost } from '../support/posts.js';
import { until } from '../support/wait.js';

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

const connect = (u: TestUser, username: string) => connectMastodon(api, mastodon, u, username);

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

  it('of 10,000: every busy account keeps its spacing while its backlog drains, and a post for another account coming due meanwhile goes out at once', async () => {
    const u = await userWithKey(api.db);
    const busy = [await connect(u, 'busy-a'), await connect(u, 'busy-b'), await connect(u, 'busy-c'), await connect(u, 'busy-d')];
    const quiet = await connect(u, 'quiet');
    const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
    const originals = [];
    for (const { account } of busy)
      originals.push(await createPost(api, u, { accountIds: [account.id], caption: `Backlog of ${account.username}`, scheduledAt: inAnHour }));
    // Each post the API wrote, copied in SQL until the four accounts hold 10,000: what createPost writes, without 10,000 requests.
    const copies = 10_000 / busy.length - 1;
    await sql`create temp table backlog_posts as select p.*, n from posts p, generate_series(1, ${copies}::int) n where p.id in (${sql.join(originals)})`.execute(
      api.db,
    );
    await sql`create temp table backlog_targets as select t.*, n from post_targets t, generate_series(1, ${copies}::int) n where t.post_id in (${sql.join(originals)})`.execute(
      api.db,
    );
    await sql`update backlog_posts set id = id || '_' || n`.execute(api.db);
    await sql`update backlog_targets set post_id = post_id || '_' || n`.execute(api.db);
    await sql`alter table backlog_posts drop column n`.execute(api.db);
    await sql`alter table backlog_targets drop column n`.execute(api.db);
    await sql`insert into posts select * from backlog_posts`.execute(api.db);
    await sql`insert into post_targets select * from backlog_targets`.execute(api.db);
    await sql`drop table backlog_posts, backlog_targets`.execute(api.db);
    await sql`analyze posts, post_targets`.execute(api.db);
    // The outage: all 10,000 came due ten minutes ago.
    const due = new Date(Date.now() - 10 * 60_000);
    await api.db.updateTable('posts').set({ scheduled_at: due, next_check_at: due }).where('user_id', '=', u.userId).execute();
    const dueNow = async () =>
      Number(
        (
          await api.db
            .selectFrom('posts')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('user_id', '=', u.userId)
            .where('next_check_at', '<=', new Date())
            .executeTakeFirstOrThrow()
        ).n,
      );

    const worker = await startWorker(api.publishing.deps, 2, api.database);
    const quietPosts: string[] = [];
    try {
      // Once the workers have been through the backlog, each busy account's posts wait for their turn: a few at a time come due, not thousands.
      await until('the backlog to be lined up', async () => (await dueNow()) <= busy.length * 2, { timeoutMs: 60_000, everyMs: 50 });
      // Posts for another account, coming due while the backlog drains.
      for (const ms of [300, 600, 900])
        quietPosts.push(
          await createPost(api, u, { accountIds: [quiet.account.id], caption: `Quiet ${ms}`, scheduledAt: new Date(Date.now() + ms).toISOString() }),
        );
      await until('the quiet posts to go out', () => mastodon.statuses.filter((s) => s.accountId === quiet.instanceId).length === quietPosts.length, {
        timeoutMs: 20_000,
        everyMs: 20,
      });
      // A little longer, so every busy account shows its pace.
      await new Promise((resolve) => setTimeout(resolve, 10 * SPACING_MS));
    } finally {
      await worker.stop();
    }

    // The quiet posts went out within a second of coming due (by the workers' clock), however long the backlog.
    const quietTargets = await api.db
      .selectFrom('post_targets as t')
      .innerJoin('posts as p', 'p.id', 't.post_id')
      .select(['p.scheduled_at', 't.first_attempt_at', 't.state'])
      .where('t.post_id', 'in', quietPosts)
      .execute();
    expect(quietTargets.map((t) => t.state)).toEqual(['published', 'published', 'published']);
    for (const t of quietTargets) expect((t.first_attempt_at?.getTime() ?? Infinity) - (t.scheduled_at?.getTime() ?? 0)).toBeLessThan(1_000);

    for (const { account, instanceId } of busy) {
      const sentAt = (
        await api.db
          .selectFrom('post_targets')
          .select('first_attempt_at')
          .where('account_id', '=', account.id)
          .where('first_attempt_at', 'is not', null)
          .orderBy('first_attempt_at')
          .execute()
      ).map((row) => row.first_attempt_at?.getTime() ?? 0);
      // Draining: several posts went out, each spaced from the last; and the instance has each once.
      expect(sentAt.length).toBeGreaterThanOrEqual(5);
      expect(Math.min(...sentAt.slice(1).map((t, i) => t - (sentAt[i] ?? 0)))).toBeGreaterThanOrEqual(SPACING_MS);
      expect(mastodon.statuses.filter((s) => s.accountId === instanceId)).toHaveLength(sentAt.length);
    }
    // The rest of the backlog is left to wait for its turn; it is not this file's other test's.
    await api.db.deleteFrom('posts').where('user_id', '=', u.userId).execute();
  }, 120_000);
});
