import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApi, type Schemas } from '../support/api.js';
import { connectThroughConsent } from '../support/consent.js';
import { startFacebookFake, type FacebookFake, type FacebookUser } from '../support/facebook-fake.js';
import { userWithKey, type TestUser } from '../support/fixtures.js';
import { makeMediaFiles, type MediaFiles } from '../support/media-files.js';
import { postDetail, publishNow, uploadMedia } from '../support/posts.js';

// The whole road to Facebook Pages: one consent connects every Page the person chose, the worker
// publishes, and the fake (written from Meta's documentation) shows what the Page holds.
let fb: FacebookFake;
let files: MediaFiles;

beforeAll(async () => {
  fb = await startFacebookFake();
  files = makeMediaFiles();
});
const api = useTestApi({
  env: () => ({ HERALD_FACEBOOK_CLIENT_ID: fb.clientId, HERALD_FACEBOOK_CLIENT_SECRET: fb.clientSecret, HERALD_FACEBOOK_BASE_URL: fb.url }),
});
afterAll(async () => {
  await fb?.close();
  files?.cleanup();
});

/** A person with one Page, connected. */
async function connectPage(u: TestUser, name: string): Promise<{ account: Schemas['Account']; pageId: string; user: FacebookUser }> {
  const user = fb.addUser({ name: `${name}'s owner` });
  const page = fb.addPage(user, { name });
  fb.consentAs(user);
  const { accounts } = await connectThroughConsent(api, u, { platform: 'facebook' });
  const [account] = accounts;
  if (account === undefined) throw new Error('the Page was not connected');
  return { account, pageId: page.id, user };
}

const postsOf = (pageId: string) => fb.posts.filter((p) => p.pageId === pageId);

describe('connecting Facebook Pages', () => {
  it('connects every Page the person chose, each its own account, and only those they may publish to', async () => {
    const u = await userWithKey(api.db);
    const user = fb.addUser({ name: 'Ada' });
    const bakery = fb.addPage(user, { name: 'Ada’s Bakery' });
    const choir = fb.addPage(user, { name: 'Town Choir' });
    const readOnly = fb.addPage(user, { name: 'Analytics Only', tasks: ['ANALYZE'] });
    const notChosen = fb.addPage(user, { name: 'Not Ticked' });
    fb.consentAs(user, [bakery.id, choir.id, readOnly.id]);
    const { connection, accounts } = await connectThroughConsent(api, u, { platform: 'facebook' });
    expect(connection).toMatchObject({ platform: 'facebook', status: 'connected', error: null });
    expect(connection.accountIds).toHaveLength(2);
    expect(connection.accountId).toBe(connection.accountIds[0]);
    expect(accounts.map((a) => [a.platform, a.username, a.mode, a.health])).toEqual([
      ['facebook', 'Ada’s Bakery', 'live', 'ok'],
      ['facebook', 'Town Choir', 'live', 'ok'],
    ]);
    const rows = await api.db.selectFrom('accounts').select(['platform_user_id', 'credentials_end_at']).where('id', 'in', connection.accountIds).execute();
    expect(rows.map((r) => r.platform_user_id).sort()).toEqual([bakery.id, choir.id].sort());
    // Page tokens do not expire.
    expect(rows.map((r) => r.credentials_end_at)).toEqual([null, null]);
    expect(rows.some((r) => r.platform_user_id === notChosen.id)).toBe(false);
  });

  it('fails the connection, connecting nothing, when the person turns off pages_manage_posts', async () => {
    const u = await userWithKey(api.db);
    const user = fb.addUser({ name: 'Bo' });
    fb.addPage(user, { name: 'Bo’s Page' });
    fb.consentAs(user, undefined, { decline: ['pages_manage_posts'] });
    const { connection, accounts } = await connectThroughConsent(api, u, { platform: 'facebook' });
    expect(connection).toMatchObject({ status: 'failed', accountIds: [] });
    expect(connection.error).toContain('pages_manage_posts');
    expect(accounts).toEqual([]);
  });
});

describe('publishing to a Facebook Page', () => {
  it('publishes text with a link, then the first comment on the post', async () => {
    const u = await userWithKey(api.db);
    const { account, pageId } = await connectPage(u, 'Cy’s Café');
    const id = await publishNow(api, u, {
      accountIds: [account.id],
      caption: 'Open on Sunday',
      firstComment: 'From 9 to 5',
      accountOverrides: [{ accountId: account.id, fields: { link: 'https://cafe.example.com/hours' } }],
    });
    await api.publishing.drain();
    const [post, ...more] = postsOf(pageId);
    expect(more).toEqual([]);
    expect(post).toMatchObject({ message: 'Open on Sunday', link: 'https://cafe.example.com/hours', comments: [{ message: 'From 9 to 5' }] });
    const [pagePart, postPart] = (post?.id ?? '').split('_');
    expect(await postDetail(api, u, id)).toMatchObject({
      status: 'published',
      targets: [{ status: 'published', platformPostId: post?.id, url: `https://www.facebook.com/${pagePart}/posts/${postPart}` }],
    });
  });

  it('uploads photos as bytes, unpublished, and attaches them all to one post', async () => {
    const u = await userWithKey(api.db);
    const { account, pageId } = await connectPage(u, 'Dee’s Garden');
    const first = await uploadMedia(api, u, files.jpeg1080x1350, 'a.jpg', 'image/jpeg', 'Red');
    const second = await uploadMedia(api, u, files.png64, 'b.png', 'image/png', 'Blue');
    await publishNow(api, u, { accountIds: [account.id], caption: 'Two photos', mediaIds: [first, second] });
    await api.publishing.drain();
    const [post] = postsOf(pageId);
    expect(post?.message).toBe('Two photos');
    expect(post?.photos.map((p) => p.bytes)).toEqual([files.jpeg1080x1350, files.png64]);
    expect([...fb.photos.values()].filter((p) => p.pageId === pageId).map((p) => [p.published, p.postId])).toEqual([
      [false, post?.id],
      [false, post?.id],
    ]);
  });

  it('uploads a video in the chunks Facebook asks for, and records the post once Facebook has processed it', async () => {
    const u = await userWithKey(api.db);
    const { account, pageId } = await connectPage(u, 'Eve’s Films');
    const video = await uploadMedia(api, u, files.mp4Noise4s, 'v.mp4', 'video/mp4', 'Noise');
    fb.videoPolls = 2;
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'A short film', mediaIds: [video] });
    await api.publishing.drain();
    const [post] = postsOf(pageId);
    const uploaded = fb.videos.get(post?.videoId ?? '');
    expect(uploaded).toMatchObject({ state: 'ready', description: 'A short film' });
    expect(uploaded?.bytes).toEqual(files.mp4Noise4s);
    expect(await postDetail(api, u, id)).toMatchObject({ status: 'published', targets: [{ status: 'published', platformPostId: post?.id }] });
  });

  it('fails media_error when Facebook cannot process the video, publishing nothing', async () => {
    const u = await userWithKey(api.db);
    const { account, pageId } = await connectPage(u, 'Kim’s Kitchen');
    const video = await uploadMedia(api, u, files.mp4Noise4s, 'v.mp4', 'video/mp4', 'Noise');
    fb.failNextVideo('The video could not be processed');
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Will not process', mediaIds: [video] });
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).targets[0]).toMatchObject({ status: 'failed', error: { category: 'media_error', retrying: false } });
    expect(postsOf(pageId)).toEqual([]);
  });

  it('publishes once when the worker loses the answer to the post: the Page is read and the post recorded', async () => {
    const u = await userWithKey(api.db);
    const { account, pageId } = await connectPage(u, 'Fay’s Forge');
    fb.fail('feed', { kind: 'commitThenDrop' });
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Exactly once on Facebook' });
    await api.publishing.drain();
    await api.publishing.drainAhead(10 * 60_000);
    const [only, ...more] = postsOf(pageId);
    expect(more).toEqual([]);
    expect(fb.feedCalls.get('Exactly once on Facebook')).toBe(1);
    expect(await postDetail(api, u, id)).toMatchObject({ status: 'published', targets: [{ status: 'published', platformPostId: only?.id }] });
  });

  it("fails user_content on Facebook's duplicate answer when the Page holds no such post from this attempt", async () => {
    const u = await userWithKey(api.db);
    const { account, pageId } = await connectPage(u, 'Gus’s Garage');
    await publishNow(api, u, { accountIds: [account.id], caption: 'Same words' });
    await api.publishing.drain();
    const second = await publishNow(api, u, { accountIds: [account.id], caption: 'Same words' });
    await api.publishing.drain();
    expect((await postDetail(api, u, second)).targets[0]).toMatchObject({ status: 'failed', error: { category: 'user_content', retrying: false } });
    expect(postsOf(pageId)).toHaveLength(1);
  });

  it("records the earlier attempt's post when, after an answer lost, Facebook refuses the retry as a duplicate of it", async () => {
    const u = await userWithKey(api.db);
    const { account, pageId } = await connectPage(u, 'Jo’s Joinery');
    // The post lands but the answer is lost; the Page's list does not show it yet, then Facebook says "duplicate".
    fb.fail('feed', { kind: 'commitThenDrop' });
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Listed late' });
    await api.publishing.drain();
    fb.fail('posts', { kind: 'answer', status: 200, body: { data: [] } });
    await api.publishing.drainAhead(10 * 60_000);
    const [only, ...more] = postsOf(pageId);
    expect(more).toEqual([]);
    expect(fb.feedCalls.get('Listed late')).toBe(2);
    expect(await postDetail(api, u, id)).toMatchObject({ status: 'published', targets: [{ status: 'published', platformPostId: only?.id }] });
  });

  it('fails auth_expired and marks the Page for reconnection after the person changes their password', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectPage(u, 'Hal’s Hall');
    fb.changePassword(user);
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'After the change' });
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).targets[0]).toMatchObject({ status: 'failed', error: { category: 'auth_expired', retrying: false } });
    const accounts = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key });
    expect(accounts.body.data.find((a) => a.id === account.id)?.health).toBe('needs_reconnect');
  });

  it('waits with rate_limited until the time Meta gives when the Page is throttled', async () => {
    const u = await userWithKey(api.db);
    const { account, pageId } = await connectPage(u, 'Ivy’s Inn');
    fb.throttle(pageId, 30);
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Throttled' });
    const before = Date.now();
    await api.publishing.drain();
    const target = (await postDetail(api, u, id)).targets[0];
    expect(target).toMatchObject({ status: 'failed', error: { category: 'rate_limited', retrying: true } });
    expect(Date.parse(target?.error?.nextAttemptAt ?? '') - before).toBeGreaterThan(25 * 60_000);
    expect(postsOf(pageId)).toEqual([]);
  });
});
