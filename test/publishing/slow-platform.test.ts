import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishNextDuePost } from '../../src/domain/publishing/publication.js';
import type { PublishingSettings } from '../../src/domain/publishing/settings.js';
import { startWorker } from '../../src/worker/worker.js';
import { useTestApi } from '../support/api.js';
import { userWithKey, type TestUser } from '../support/fixtures.js';
import { connectMastodon } from '../support/mastodon-accounts.js';
import { startMastodonFake, type MastodonFake } from '../support/mastodon-fake.js';
import { postDetail, publishNow } from '../support/posts.js';
import { until } from '../support/wait.js';

// A tenant whose Mastodon instance holds every status open: it holds only its own share of a
// worker, never its lanes (issue 38, items 6 and 7). The slow instance is a real HTTP server on
// 127.0.0.1 that waits a bounded time before creating each status; what it and a quick instance
// received is what the tests look at.
const api = useTestApi();
let slow: MastodonFake;
let quick: MastodonFake;

beforeAll(async () => {
  [slow, quick] = await Promise.all([startMastodonFake(), startMastodonFake()]);
});
afterAll(async () => {
  await Promise.all([slow?.close(), quick?.close()]);
});

const connect = (fake: MastodonFake, u: TestUser, username: string) => connectMastodon(api, fake, u, username);

/** Runs `body` with these publishing settings, then puts the file's back, and lets the slow instance answer at once again. */
async function withSettings(settings: Partial<PublishingSettings>, body: () => Promise<void>): Promise<void> {
  const live = api.publishing.deps.settings;
  const before = { ...live };
  Object.assign(live, settings);
  try {
    await body();
  } finally {
    Object.assign(live, before);
    slow.statusCalls.holdMs = 0;
    slow.statusCalls.most = 0;
  }
}

const textsOf = (fake: MastodonFake, instanceId: string) => fake.statuses.filter((s) => s.accountId === instanceId).map((s) => s.text);
const thread = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} ${i + 1}/${n}`);

describe('a tenant whose instance answers each status slowly', () => {
  it("does not hold the worker's lanes: another tenant's post on another instance goes out on time while its calls are still in flight", async () => {
    const a = await userWithKey(api.db);
    const b = await userWithKey(api.db);
    const slowAccount = await connect(slow, a, 'slow-a');
    const quickAccount = await connect(quick, b, 'quick-b');
    slow.statusCalls.holdMs = 3_000;
    // The worker's usual four lanes (HERALD_WORKER_CONCURRENCY).
    const worker = await startWorker(api.publishing.deps, 4, api.database);
    try {
      for (let i = 0; i < 4; i++) {
        await publishNow(api, a, { accountIds: [slowAccount.account.id], postType: 'thread', threadParts: { [slowAccount.account.id]: thread(3, `A${i}`) } });
      }
      await until('four threads of the slow tenant to be in flight', () => slow.statusCalls.inFlight === 4, { timeoutMs: 10_000, everyMs: 20 });
      const id = await publishNow(api, b, { accountIds: [quickAccount.account.id], caption: 'On time' });
      // Each of the slow threads holds its call for 9 s; B's post goes out within a second.
      await until("the other tenant's post to go out", () => textsOf(quick, quickAccount.instanceId).includes('On time'), { timeoutMs: 1_500, everyMs: 20 });
      expect(slow.statusCalls.inFlight).toBe(4);
      await until('its outcome to be recorded', async () => (await postDetail(api, b, id)).status === 'published', { timeoutMs: 2_000, everyMs: 20 });
      slow.statusCalls.holdMs = 0;
    } finally {
      slow.statusCalls.holdMs = 0;
      await worker.stop();
    }
    // Stopping waited for the calls in flight: every part of the slow threads went out, once.
    expect(textsOf(slow, slowAccount.instanceId).sort()).toEqual([0, 1, 2, 3].flatMap((i) => thread(3, `A${i}`)).sort());
  }, 30_000);

  it('has at most its share of calls in flight: per user, and per platform host across users', async () => {
    await withSettings({ maxInFlightPerUser: 2, maxInFlightPerHost: 3 }, async () => {
      const one = await userWithKey(api.db);
      const others = [await userWithKey(api.db), await userWithKey(api.db)];
      const own = await connect(slow, one, 'capped-one');
      slow.statusCalls.holdMs = 300;
      slow.statusCalls.most = 0;
      const worker = await startWorker(api.publishing.deps, 4, api.database);
      try {
        for (let i = 0; i < 6; i++) await publishNow(api, one, { accountIds: [own.account.id], caption: `Own ${i}` });
        await until('the user’s six posts', () => textsOf(slow, own.instanceId).length === 6, { timeoutMs: 15_000, everyMs: 20 });
        // One user: two at a time, never more (all six were due at once).
        expect(slow.statusCalls.most).toBe(2);

        slow.statusCalls.most = 0;
        const accounts = [await connect(slow, others[0]!, 'host-x'), await connect(slow, others[1]!, 'host-y')];
        for (const [i, u] of others.entries()) {
          for (let n = 0; n < 3; n++) await publishNow(api, u, { accountIds: [accounts[i]!.account.id], caption: `Host ${i}.${n}` });
        }
        await until('the two users’ posts', () => accounts.every(({ instanceId }) => textsOf(slow, instanceId).length === 3), {
          timeoutMs: 15_000,
          everyMs: 20,
        });
        // Two users of one instance, two each at most: three at a time on the host.
        expect(slow.statusCalls.most).toBe(3);
      } finally {
        slow.statusCalls.holdMs = 0;
        await worker.stop();
      }
    });
  }, 40_000);

  it('past the total time bound, the publication is in doubt and retried; the retry finds the status the platform made, posted once', async () => {
    await withSettings({ publishTimeoutMs: 1_000 }, async () => {
      const u = await userWithKey(api.db);
      const { account, instanceId } = await connect(slow, u, 'overdue');
      slow.statusCalls.holdMs = 2_500;
      const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Took too long' });
      const started = Date.now();
      await api.publishing.drain();
      // Not waited for: the drain ended at the bound, with the call still held open.
      expect(Date.now() - started).toBeLessThan(2_300);
      expect(slow.statusCalls.inFlight).toBe(1);
      const target = (await postDetail(api, u, id)).targets[0];
      expect(target).toMatchObject({ status: 'failed', error: { category: 'platform_error', retrying: true } });
      expect(target?.error?.message).toContain('did not finish publishing within 1 s');

      // The instance did create it in the end; the retry (after its backoff) asks before sending again.
      await until('the held status to be created', () => textsOf(slow, instanceId).length === 1, { timeoutMs: 5_000, everyMs: 20 });
      slow.statusCalls.holdMs = 0;
      await api.publishing.drainAhead(5 * 60_000);
      const detail = await postDetail(api, u, id);
      expect(detail.status).toBe('published');
      expect(textsOf(slow, instanceId)).toEqual(['Took too long']);
      expect(detail.targets[0]?.platformPostId).toBe(slow.statuses.find((s) => s.accountId === instanceId)?.id);
      expect(
        slow.requests.filter(
          (r) => r.method === 'POST' && r.path === '/api/v1/statuses' && r.body !== null && JSON.stringify(r.body).includes('Took too long'),
        ),
      ).toHaveLength(1);
    });
  }, 20_000);
});

describe('a lease far shorter than the calls', () => {
  it('is renewed while the publication lives: an 8-part thread is posted once per part, by one attempt', async () => {
    await withSettings({ leaseMs: 150 }, async () => {
      const u = await userWithKey(api.db);
      const { account, instanceId } = await connect(slow, u, 'long-thread');
      slow.statusCalls.holdMs = 200;
      const id = await publishNow(api, u, { accountIds: [account.id], postType: 'thread', threadParts: { [account.id]: thread(8, 'Long') } });
      // The worker looks at the post again each time the lease would have run out, while its own call goes on (1.6 s of calls).
      const worker = await startWorker(api.publishing.deps, 4, api.database);
      try {
        await until('the thread to be published', async () => (await postDetail(api, u, id)).status === 'published', { timeoutMs: 10_000, everyMs: 50 });
      } finally {
        await worker.stop();
      }
      expect(textsOf(slow, instanceId)).toEqual(thread(8, 'Long'));
      expect(slow.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/statuses' && JSON.stringify(r.body).includes('Long'))).toHaveLength(8);
      const detail = await postDetail(api, u, id);
      expect(detail.status).toBe('published');
      const { attempts } = await api.db.selectFrom('post_targets').select('attempts').where('post_id', '=', id).executeTakeFirstOrThrow();
      expect(attempts).toBe(1);
    });
  }, 20_000);

  it('fences a stale attempt: once another holds the target, it records nothing and posts no further part', async () => {
    const u = await userWithKey(api.db);
    const { account, instanceId } = await connect(slow, u, 'fenced');
    slow.statusCalls.holdMs = 200;
    const id = await publishNow(api, u, { accountIds: [account.id], postType: 'thread', threadParts: { [account.id]: thread(8, 'Fenced') } });
    try {
      const stale = publishNextDuePost(api.publishing.deps);
      await until('two parts to go out', () => textsOf(slow, instanceId).length === 2, { timeoutMs: 5_000, everyMs: 5 });
      // Another worker takes the target over, as it would once this one's lease ran out unrenewed.
      const takenOver = { attempts: 2, lease_until: new Date(Date.now() + 3_600_000) };
      await api.db.updateTable('post_targets').set(takenOver).where('post_id', '=', id).execute();
      expect(await stale).toBe('published');
      // At most the part already held open goes out; none after it.
      const sent = textsOf(slow, instanceId);
      expect(sent.length).toBeLessThanOrEqual(3);
      expect(sent).toEqual(thread(8, 'Fenced').slice(0, sent.length));
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(textsOf(slow, instanceId)).toEqual(sent);
      // Nothing recorded by the stale attempt: the target is as the new holder left it, and parts past the takeover are unrecorded.
      const target = await api.db.selectFrom('post_targets').select(['state', 'attempts', 'lease_until']).where('post_id', '=', id).executeTakeFirstOrThrow();
      expect(target).toEqual({ state: 'publishing', ...takenOver });
      const recorded = await api.db
        .selectFrom('target_parts')
        .select('position')
        .where('post_id', '=', id)
        .where('platform_post_id', 'is not', null)
        .orderBy('position')
        .execute();
      // Parts recorded before the takeover at most (the second may have been taken over before its record).
      expect(recorded.map((p) => p.position)).toEqual([0, 1].slice(0, recorded.length));
      expect(recorded.length).toBeGreaterThanOrEqual(1);
    } finally {
      slow.statusCalls.holdMs = 0;
    }
  }, 20_000);
});
