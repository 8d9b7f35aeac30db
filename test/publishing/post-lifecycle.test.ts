import { describe, expect, it } from 'vitest';
import { useTestApi, type Schemas } from '../support/api.js';
import { account, userWithKey } from '../support/fixtures.js';
import { createPost, postDetail } from '../support/posts.js';

const api = useTestApi();
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

type PostDetail = Schemas['PostDetail'];

function inMs(ms: number): string {
  return new Date(Date.now() + ms).toISOString();
}

async function outboxCount(accountId: string): Promise<number> {
  return (await api.db.selectFrom('sandbox_outbox').select('platform_post_id').where('account_id', '=', accountId).execute()).length;
}

describe('scheduling', () => {
  it('publishes a scheduled post once scheduledAt comes, not before, and never a draft', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId);
    const scheduled = await createPost(api, u, { accountIds: [x], caption: 'a', scheduledAt: inMs(HOUR) });
    const draft = await createPost(api, u, { accountIds: [x], caption: 'b' });
    api.publishing.runAhead(HOUR - MINUTE);
    await api.publishing.drain();
    expect((await postDetail(api, u, scheduled)).status).toBe('scheduled');
    api.publishing.runAhead(HOUR + MINUTE);
    await api.publishing.drain();
    api.publishing.runAhead(0);
    expect((await postDetail(api, u, scheduled)).status).toBe('published');
    expect((await postDetail(api, u, draft)).status).toBe('draft');
    expect(await outboxCount(x)).toBe(1);
  });

  it('leaves no post behind when the create is refused', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x');
    const res = await api.request({
      method: 'POST',
      url: '/api/v1/posts',
      key: u.key,
      body: { accountIds: [x], caption: 'x'.repeat(281), scheduledAt: inMs(HOUR) },
    });
    expect(res.status).toBe(400);
    expect(await api.db.selectFrom('posts').select('id').where('user_id', '=', u.userId).execute()).toEqual([]);
  });
});

describe('PATCH /api/v1/posts/{id}', () => {
  it('reschedules: the post is published at the new time, not the old one', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId);
    const id = await createPost(api, u, { accountIds: [x], caption: 'a', scheduledAt: inMs(HOUR) });
    const later = inMs(2 * HOUR);
    const res = await api.request<PostDetail>({ method: 'PATCH', url: `/api/v1/posts/${id}`, key: u.key, body: { scheduledAt: later, caption: 'b' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'scheduled', caption: 'b', scheduledAt: new Date(later).toISOString() });
    api.publishing.runAhead(HOUR + MINUTE);
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).status).toBe('scheduled');
    api.publishing.runAhead(2 * HOUR + MINUTE);
    await api.publishing.drain();
    api.publishing.runAhead(0);
    expect(await postDetail(api, u, id)).toMatchObject({ status: 'published', caption: 'b' });
    expect(await outboxCount(x)).toBe(1);
  });

  it('makes a scheduled post a draft with scheduledAt null, and a draft is never published', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId);
    const id = await createPost(api, u, { accountIds: [x], caption: 'a', scheduledAt: inMs(MINUTE) });
    const res = await api.request<PostDetail>({ method: 'PATCH', url: `/api/v1/posts/${id}`, key: u.key, body: { scheduledAt: null } });
    expect(res.body).toMatchObject({ status: 'draft', scheduledAt: null });
    api.publishing.runAhead(2 * MINUTE);
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).status).toBe('draft');
    expect(await outboxCount(x)).toBe(0);
  });

  it('runs the create checks on the post as it would be, and changes nothing when they fail', async () => {
    const u = await userWithKey(api.db);
    const other = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x');
    const foreign = await account(api.db, other.userId, 'x');
    const id = await createPost(api, u, { accountIds: [x], caption: 'short' });
    const tooLong = await api.request({ method: 'PATCH', url: `/api/v1/posts/${id}`, key: u.key, body: { caption: 'x'.repeat(281) } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toEqual({ error: expect.stringMatching(/^X caption allows at most 280 characters; got 281/) as unknown, code: 'platform_limit' });
    const notYours = await api.request({ method: 'PATCH', url: `/api/v1/posts/${id}`, key: u.key, body: { accountIds: [foreign] } });
    expect(notYours).toMatchObject({ status: 403, body: { error: `Account not accessible: ${foreign}` } });
    const past = await api.request({ method: 'PATCH', url: `/api/v1/posts/${id}`, key: u.key, body: { scheduledAt: '2020-01-01T00:00:00Z' } });
    expect(past).toMatchObject({
      status: 400,
      body: { error: 'Invalid request', details: [expect.objectContaining({ path: ['scheduledAt'], code: 'too_small' })] },
    });
    const unknownField = await api.request({ method: 'PATCH', url: `/api/v1/posts/${id}`, key: u.key, body: { captionn: 'x' } });
    expect(unknownField).toMatchObject({ status: 400, body: { error: 'Invalid request' } });
    expect(await postDetail(api, u, id)).toMatchObject({ caption: 'short', status: 'draft', targets: [expect.objectContaining({ accountId: x })] });
  });

  it('replaces targets, overrides and thread parts, and keeps what the change leaves out', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x');
    const th = await account(api.db, u.userId, 'threads');
    const id = await createPost(api, u, {
      accountIds: [x],
      caption: 'hello',
      firstComment: 'first',
      accountOverrides: [{ accountId: x, captionOverride: 'hi X' }],
    });
    const res = await api.request<PostDetail>({ method: 'PATCH', url: `/api/v1/posts/${id}`, key: u.key, body: { accountIds: [x, th], firstComment: null } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ caption: 'hello', firstComment: null });
    expect(res.body.targets.map((t) => [t.accountId, t.caption])).toEqual([
      [x, 'hi X'],
      [th, 'hello'],
    ]);
  });

  it("answers 404 for another user's post, and 400 for a published one", async () => {
    const u = await userWithKey(api.db);
    const other = await userWithKey(api.db);
    const x = await account(api.db, u.userId);
    const id = await createPost(api, u, { accountIds: [x], caption: 'a' });
    expect(await api.request({ method: 'PATCH', url: `/api/v1/posts/${id}`, key: other.key, body: { caption: 'b' } })).toMatchObject({
      status: 404,
      body: { error: 'Post not found' },
    });
    expect((await api.request({ method: 'POST', url: `/api/v1/posts/${id}/publish`, key: u.key })).status).toBe(202);
    await api.publishing.drain();
    expect(await api.request({ method: 'PATCH', url: `/api/v1/posts/${id}`, key: u.key, body: { caption: 'b' } })).toMatchObject({
      status: 400,
      body: { error: 'Cannot edit published post' },
    });
    expect(await api.request({ method: 'DELETE', url: `/api/v1/posts/${id}`, key: u.key })).toMatchObject({
      status: 400,
      body: { error: 'Cannot delete published post' },
    });
    expect((await postDetail(api, u, id)).caption).toBe('a');
  });
});

describe('POST /api/v1/posts/{id}/publish', () => {
  it('publishes a draft now, and refuses a post already published', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId);
    const id = await createPost(api, u, { accountIds: [x], caption: 'now' });
    const res = await api.request<PostDetail>({ method: 'POST', url: `/api/v1/posts/${id}/publish`, key: u.key });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'publishing', targets: [expect.objectContaining({ status: 'pending' })] });
    expect(await api.publishing.drain()).toBe(1);
    expect((await postDetail(api, u, id)).status).toBe('published');
    expect(await api.request({ method: 'POST', url: `/api/v1/posts/${id}/publish`, key: u.key })).toMatchObject({
      status: 400,
      body: { error: 'Post has already been published or has failed; use retry for failed targets' },
    });
    expect(await outboxCount(x)).toBe(1);
  });
});

describe('DELETE /api/v1/posts/{id}', () => {
  it('deletes a scheduled post, which is then never published', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId);
    const id = await createPost(api, u, { accountIds: [x], caption: 'a', scheduledAt: inMs(MINUTE) });
    expect(await api.request({ method: 'DELETE', url: `/api/v1/posts/${id}`, key: u.key })).toMatchObject({ status: 200 });
    api.publishing.runAhead(2 * MINUTE);
    expect(await api.publishing.drain()).toBe(0);
    expect(await outboxCount(x)).toBe(0);
  });
});

describe('lateness', () => {
  it('publishes a post that came due within the bound, and fails one past it with system_error until retried', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId);
    const late = await createPost(api, u, { accountIds: [x], caption: 'slightly late', scheduledAt: inMs(MINUTE) });
    const stale = await createPost(api, u, { accountIds: [x], caption: 'stale', scheduledAt: inMs(2 * MINUTE) });
    // The service was "down" until 1h 1m 30s after now: one post is 1h 30s late, the other 59m 30s late.
    api.publishing.runAhead(HOUR + MINUTE + 30_000);
    await api.publishing.drain();
    const [a, b] = [await postDetail(api, u, late), await postDetail(api, u, stale)];
    expect(a.status).toBe('failed');
    expect(a.targets[0]?.error).toMatchObject({ category: 'system_error', retrying: false, attempts: 0 });
    expect(a.targets[0]?.error?.message).toMatch(/^Not published: it came due 61 minutes ago, .* 60-minute lateness bound; retry the post/);
    expect(b.status).toBe('published');

    const nothing = await api.request({ method: 'POST', url: `/api/v1/posts/${stale}/retry`, key: u.key });
    expect(nothing).toMatchObject({ status: 400, body: { error: 'Nothing to retry: no target has failed' } });
    const retried = await api.request<PostDetail>({ method: 'POST', url: `/api/v1/posts/${late}/retry`, key: u.key });
    expect(retried).toMatchObject({ status: 202, body: { status: 'publishing', targets: [expect.objectContaining({ status: 'pending', error: null })] } });
    await api.publishing.drain();
    expect((await postDetail(api, u, late)).status).toBe('published');
    expect(await outboxCount(x)).toBe(2);
  });
});

describe('disconnecting an account', () => {
  it('fails its pending targets with auth_expired, and leaves the post of the other account published (partial)', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x');
    const li = await account(api.db, u.userId, 'linkedin');
    const id = await createPost(api, u, { accountIds: [x, li], caption: 'a', scheduledAt: inMs(MINUTE) });
    expect(await api.request({ method: 'DELETE', url: `/api/v1/accounts/${li}`, key: u.key })).toMatchObject({ status: 200, body: { success: true } });
    api.publishing.runAhead(2 * MINUTE);
    await api.publishing.drain();
    const post = await postDetail(api, u, id);
    expect(post.status).toBe('partial');
    expect(post.targets.map((t) => [t.status, t.error?.category ?? null])).toEqual([
      ['published', null],
      ['failed', 'auth_expired'],
    ]);
    expect(await api.request({ method: 'DELETE', url: `/api/v1/accounts/${li}`, key: u.key })).toMatchObject({
      status: 404,
      body: { error: 'Account not found' },
    });
  });
});
