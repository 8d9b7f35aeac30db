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

/** The post's jobs in pg-boss by state: what a worker will be woken for. */
async function jobs(postId: string): Promise<{ state: string; start_after: Date }[]> {
  const rows = await api.db
    .withSchema('pgboss')
    .selectFrom('job' as never)
    .select(['state' as never, 'start_after' as never])
    .where('data' as never, '=', JSON.stringify({ postId }) as never)
    .execute();
  return rows as { state: string; start_after: Date }[];
}

describe('scheduling and its job', () => {
  it('creates a job at scheduledAt in the same transaction, and none for a draft', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId);
    const at = inMs(HOUR);
    const scheduled = await createPost(api, u, { accountIds: [x], caption: 'a', scheduledAt: at });
    expect((await jobs(scheduled)).map((j) => [j.state, j.start_after.toISOString()])).toEqual([['created', new Date(at).toISOString()]]);
    const draft = await createPost(api, u, { accountIds: [x], caption: 'b' });
    expect(await jobs(draft)).toEqual([]);
  });

  it('leaves no post and no job behind when the create is refused', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x');
    const res = await api.request({ method: 'POST', url: '/api/v1/posts', key: u.key, body: { accountIds: [x], caption: 'x'.repeat(281), scheduledAt: inMs(HOUR) } });
    expect(res.status).toBe(400);
    const all = await api.db.withSchema('pgboss').selectFrom('job' as never).select(['data' as never]).execute();
    expect((all as { data: { postId: string } }[]).filter((j) => j.data.postId === undefined)).toEqual([]);
    expect(await api.db.selectFrom('posts').select('id').where('user_id', '=', u.userId).execute()).toEqual([]);
  });
});

describe('PATCH /api/v1/posts/{id}', () => {
  it('reschedules: the old job is cancelled and a new one waits at the new time', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId);
    const id = await createPost(api, u, { accountIds: [x], caption: 'a', scheduledAt: inMs(HOUR) });
    const later = inMs(2 * HOUR);
    const res = await api.request<PostDetail>({ method: 'PATCH', url: `/api/v1/posts/${id}`, key: u.key, body: { scheduledAt: later, caption: 'b' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'scheduled', caption: 'b', scheduledAt: new Date(later).toISOString() });
    expect((await jobs(id)).map((j) => j.state).sort()).toEqual(['cancelled', 'created']);
  });

  it('makes a scheduled post a draft with scheduledAt null, and a draft is never published', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId);
    const id = await createPost(api, u, { accountIds: [x], caption: 'a', scheduledAt: inMs(MINUTE) });
    const res = await api.request<PostDetail>({ method: 'PATCH', url: `/api/v1/posts/${id}`, key: u.key, body: { scheduledAt: null } });
    expect(res.body).toMatchObject({ status: 'draft', scheduledAt: null });
    expect((await jobs(id)).map((j) => j.state)).toEqual(['cancelled']);
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
    expect(tooLong.body).toEqual({ error: expect.stringMatching(/^X caption allows at most 280 characters; got 281/) as unknown });
    const notYours = await api.request({ method: 'PATCH', url: `/api/v1/posts/${id}`, key: u.key, body: { accountIds: [foreign] } });
    expect(notYours).toMatchObject({ status: 403, body: { error: `Account not accessible: ${foreign}` } });
    const past = await api.request({ method: 'PATCH', url: `/api/v1/posts/${id}`, key: u.key, body: { scheduledAt: '2020-01-01T00:00:00Z' } });
    expect(past).toMatchObject({ status: 400, body: { error: 'Invalid request', details: [expect.objectContaining({ path: ['scheduledAt'], code: 'too_small' })] } });
    const unknownField = await api.request({ method: 'PATCH', url: `/api/v1/posts/${id}`, key: u.key, body: { captionn: 'x' } });
    expect(unknownField).toMatchObject({ status: 400, body: { error: 'Invalid request' } });
    expect(await postDetail(api, u, id)).toMatchObject({ caption: 'short', status: 'draft', targets: [expect.objectContaining({ accountId: x })] });
  });

  it('replaces targets, overrides and thread parts, and keeps what the change leaves out', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x');
    const th = await account(api.db, u.userId, 'threads');
    const id = await createPost(api, u, { accountIds: [x], caption: 'hello', firstComment: 'first', accountOverrides: [{ accountId: x, captionOverride: 'hi X' }] });
    const res = await api.request<PostDetail>({ method: 'PATCH', url: `/api/v1/posts/${id}`, key: u.key, body: { accountIds: [x, th], firstComment: null } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ caption: 'hello', firstComment: null });
    expect(res.body.targets.map((t) => [t.accountId, t.caption])).toEqual([
      [x, 'hi X'],
      [th, 'hello'],
    ]);
  });

  it('answers 404 for another user\'s post, and 400 for a published one', async () => {
    const u = await userWithKey(api.db);
    const other = await userWithKey(api.db);
    const x = await account(api.db, u.userId);
    const id = await createPost(api, u, { accountIds: [x], caption: 'a' });
    expect(await api.request({ method: 'PATCH', url: `/api/v1/posts/${id}`, key: other.key, body: { caption: 'b' } })).toMatchObject({ status: 404, body: { error: 'Post not found' } });
    expect((await api.request({ method: 'POST', url: `/api/v1/posts/${id}/publish`, key: u.key })).status).toBe(202);
    await api.publishing.drain();
    expect(await api.request({ method: 'PATCH', url: `/api/v1/posts/${id}`, key: u.key, body: { caption: 'b' } })).toMatchObject({ status: 400, body: { error: 'Cannot edit published post' } });
    expect(await api.request({ method: 'DELETE', url: `/api/v1/posts/${id}`, key: u.key })).toMatchObject({ status: 400, body: { error: 'Cannot delete published post' } });
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
  it('cancels the job of a scheduled post with the post', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId);
    const id = await createPost(api, u, { accountIds: [x], caption: 'a', scheduledAt: inMs(MINUTE) });
    expect(await api.request({ method: 'DELETE', url: `/api/v1/posts/${id}`, key: u.key })).toMatchObject({ status: 200 });
    expect((await jobs(id)).map((j) => j.state)).toEqual(['cancelled']);
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
    expect(await api.request({ method: 'DELETE', url: `/api/v1/accounts/${li}`, key: u.key })).toMatchObject({ status: 404, body: { error: 'Account not found' } });
  });
});
