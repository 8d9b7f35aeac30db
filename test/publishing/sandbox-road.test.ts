import { describe, expect, it } from 'vitest';
import { SANDBOX_URL_BASE } from '../../src/adapters/platforms/sandbox.js';
import { useTestApi, type Schemas } from '../support/api.js';
import { account, userWithKey, type TestUser } from '../support/fixtures.js';
import { postDetail } from '../support/posts.js';

const api = useTestApi();
const MINUTE = 60_000;

async function schedule(u: TestUser, body: Record<string, unknown>, inMs = MINUTE): Promise<string> {
  const res = await api.request<{ id: string }>({
    method: 'POST',
    url: '/api/v1/posts',
    key: u.key,
    body: { scheduledAt: new Date(Date.now() + inMs).toISOString(), ...body },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** What the sandbox "platform" holds for an account, oldest first: read from the outbox, not from the post's own rows. */
async function outbox(accountId: string) {
  return api.db.selectFrom('sandbox_outbox').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('position').execute();
}

describe('a scheduled post on sandbox accounts', () => {
  it('is published when it comes due, once per account, and shows where it went', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x', 'ada');
    const li = await account(api.db, u.userId, 'linkedin', 'ada-l');
    const id = await schedule(u, {
      accountIds: [x, li],
      caption: 'Launch day',
      accountOverrides: [{ accountId: li, captionOverride: 'Launch day, LinkedIn' }],
    });

    expect(await api.publishing.drain()).toBe(0);
    expect((await postDetail(api, u, id)).status).toBe('scheduled');
    expect(await outbox(x)).toEqual([]);

    api.publishing.runAhead(MINUTE + 1000);
    expect(await api.publishing.drain()).toBe(1);

    const post = await postDetail(api, u, id);
    expect(post.status).toBe('published');
    expect(post.targets.map((t) => [t.accountId, t.status, t.caption, t.error])).toEqual([
      [x, 'published', 'Launch day', null],
      [li, 'published', 'Launch day, LinkedIn', null],
    ]);
    for (const target of post.targets) {
      expect(target.platformPostId).toMatch(/^sbx_[0-9a-f]{24}$/);
      expect(target.url).toBe(`${SANDBOX_URL_BASE}/${target.platform}/${target.username}/${target.platformPostId}`);
      expect(Date.parse(target.publishedAt ?? '')).toBeGreaterThan(Date.parse(post.createdAt));
    }
    expect((await outbox(x)).map((r) => [r.text, r.platform, r.username, r.platform_post_id])).toEqual([
      ['Launch day', 'x', 'ada', post.targets[0]?.platformPostId],
    ]);
    expect((await outbox(li)).map((r) => r.text)).toEqual(['Launch day, LinkedIn']);

    const listed = await api.request<Schemas['PostList']>({ method: 'GET', url: '/api/v1/posts?status=published', key: u.key });
    expect(listed.body.data.map((p) => p.id)).toEqual([id]);

    // Draining again publishes nothing twice.
    expect(await api.publishing.drain()).toBe(0);
    expect(await outbox(x)).toHaveLength(1);
  });

  it('leaves drafts and posts not yet due alone', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId);
    const draft = await api.request<{ id: string }>({ method: 'POST', url: '/api/v1/posts', key: u.key, body: { accountIds: [x], caption: 'draft' } });
    const later = await schedule(u, { accountIds: [x], caption: 'later' }, 3 * 3_600_000);
    api.publishing.runAhead(2 * 3_600_000);
    await api.publishing.drain();
    expect((await postDetail(api, u, draft.body.id)).status).toBe('draft');
    expect((await postDetail(api, u, later)).status).toBe('scheduled');
    expect(await outbox(x)).toEqual([]);
  });

  it('publishes a thread and its first comment as a chain of replies', async () => {
    const u = await userWithKey(api.db);
    const th = await account(api.db, u.userId, 'threads', 'ada');
    const id = await schedule(u, { accountIds: [th], postType: 'thread', threadParts: { [th]: ['one', 'two', 'three'] }, firstComment: 'comment' });
    api.publishing.runAhead(2 * MINUTE);
    await api.publishing.drain();
    const rows = await outbox(th);
    expect(rows.map((r) => r.text)).toEqual(['one', 'two', 'three', 'comment']);
    expect(rows.map((r) => r.reply_to)).toEqual([null, rows[0]?.platform_post_id, rows[1]?.platform_post_id, rows[2]?.platform_post_id]);
    expect((await postDetail(api, u, id)).targets[0]?.platformPostId).toBe(rows[0]?.platform_post_id);
  });
});
