import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApi, type Schemas } from '../support/api.js';
import { connectThroughConsent } from '../support/consent.js';
import { userWithKey, type TestUser } from '../support/fixtures.js';
import { makeMediaFiles, type MediaFiles } from '../support/media-files.js';
import { postDetail, publishNow, uploadMedia } from '../support/posts.js';
import { startTikTokFake, type TikTokFake, type TikTokUser } from '../support/tiktok-fake.js';

// The whole road to TikTok: connect through its consent page, post with the worker, and assert what
// TikTok (a fake written from the Content Posting API's documentation) holds.
let tt: TikTokFake;
let files: MediaFiles;

beforeAll(async () => {
  tt = await startTikTokFake();
  files = makeMediaFiles();
});
const api = useTestApi({
  listen: true,
  env: () => ({ HERALD_TIKTOK_CLIENT_ID: tt.clientKey, HERALD_TIKTOK_CLIENT_SECRET: tt.clientSecret, HERALD_TIKTOK_BASE_URL: tt.url }),
});
afterAll(async () => {
  await tt?.close();
  files?.cleanup();
});

async function connectTikTok(u: TestUser, username: string): Promise<{ account: Schemas['Account']; user: TikTokUser }> {
  const user = tt.addUser({ username });
  tt.consentAs(user);
  const { connection, accounts } = await connectThroughConsent(api, u, { platform: 'tiktok' });
  const [account] = accounts;
  if (account === undefined) throw new Error(`not connected: ${JSON.stringify(connection)}`);
  return { account, user };
}

const postsOf = (user: TikTokUser) => tt.posts.filter((p) => p.userOpenId === user.openId);
const privacy = (accountId: string, more: Record<string, unknown> = {}) => [{ accountId, fields: { privacyLevel: 'PUBLIC_TO_EVERYONE', ...more } }];

describe('connecting a TikTok account', () => {
  it('goes through the consent page with its client key and keeps the rotating tokens sealed', async () => {
    const u = await userWithKey(api.db);
    const user = tt.addUser({ username: 'ada.tt', displayName: 'Ada' });
    tt.consentAs(user);
    const { connection, accounts } = await connectThroughConsent(api, u, { platform: 'tiktok' });
    expect(connection).toMatchObject({ platform: 'tiktok', status: 'connected', error: null });
    expect(accounts).toEqual([expect.objectContaining({ platform: 'tiktok', username: 'ada.tt', displayName: 'Ada', mode: 'live', health: 'ok' })]);
    expect(tt.authorizations.at(-1)?.query).toMatchObject({
      client_key: tt.clientKey,
      scope: 'user.info.basic,video.publish,video.upload',
      response_type: 'code',
    });
    const row = await api.db
      .selectFrom('accounts')
      .select('platform_user_id')
      .where('id', '=', connection.accountId ?? '')
      .executeTakeFirstOrThrow();
    expect(row.platform_user_id).toBe(user.openId);
  });
});

describe('posting to TikTok', () => {
  it('uploads a video by FILE_UPLOAD with the creator-checked settings, pending until TikTok has published it', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectTikTok(u, 'bo.tt');
    const video = await uploadMedia(api, u, files.mp4Noise4s, 'v.mp4', 'video/mp4', 'Noise');
    const id = await publishNow(api, u, {
      accountIds: [account.id],
      caption: 'Noise #test',
      mediaIds: [video],
      accountOverrides: privacy(account.id, { disableDuet: true }),
    });
    await api.publishing.drain();
    const [post, ...more] = postsOf(user);
    expect(more).toEqual([]);
    expect(post).toMatchObject({
      mediaType: 'VIDEO',
      postMode: 'DIRECT_POST',
      title: 'Noise #test',
      privacyLevel: 'PUBLIC_TO_EVERYONE',
      disableDuet: true,
      status: 'PUBLISH_COMPLETE',
    });
    expect(post?.bytes).toEqual(files.mp4Noise4s);
    expect(await postDetail(api, u, id)).toMatchObject({
      status: 'published',
      targets: [{ status: 'published', platformPostId: post?.postId, url: `https://www.tiktok.com/@bo.tt/video/${post?.postId ?? ''}` }],
    });
  });

  it('posts photos TikTok pulls from Herald’s public URLs', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectTikTok(u, 'cy.tt');
    const image = await uploadMedia(api, u, files.jpeg1080x1350, 'a.jpg', 'image/jpeg', 'Red');
    await publishNow(api, u, {
      accountIds: [account.id],
      postType: 'carousel',
      caption: 'A red photo',
      mediaIds: [image],
      accountOverrides: privacy(account.id),
    });
    await api.publishing.drain();
    const [post, ...more] = postsOf(user);
    expect(more).toEqual([]);
    expect(post).toMatchObject({ mediaType: 'PHOTO', description: 'A red photo', status: 'PUBLISH_COMPLETE' });
    expect(post?.photoUrls[0]).toContain(`/media/${image}?expires=`);
  });

  it('refuses at create a live TikTok post without privacyLevel, and at publish one the creator does not offer', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectTikTok(u, 'dee.tt');
    const video = await uploadMedia(api, u, files.mp4Noise4s, 'v.mp4', 'video/mp4', 'Noise');
    const bad = await api.request<Schemas['Error']>({
      method: 'POST',
      url: '/api/v1/posts',
      key: u.key,
      body: { accountIds: [account.id], caption: 'x', mediaIds: [video] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'Invalid request', details: [{ code: 'invalid_type', path: ['accountOverrides'] }] });
    user.privacyLevelOptions = ['FOLLOWER_OF_CREATOR', 'SELF_ONLY'];
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Too public', mediaIds: [video], accountOverrides: privacy(account.id) });
    await api.publishing.drain();
    const target = (await postDetail(api, u, id)).targets[0];
    expect(target).toMatchObject({ status: 'failed', error: { category: 'user_content', retrying: false } });
    expect(target?.error?.message).toBe('TikTok does not offer privacyLevel PUBLIC_TO_EVERYONE to this creator; it offers FOLLOWER_OF_CREATOR, SELF_ONLY');
    expect(postsOf(user)).toEqual([]);
  });

  it('posts once when the answer to the last chunk is lost: the publish id is asked about, nothing is sent again', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectTikTok(u, 'eve.tt');
    const video = await uploadMedia(api, u, files.mp4Noise4s, 'v.mp4', 'video/mp4', 'Noise');
    tt.fail('upload', { kind: 'commitThenDrop' });
    const inits = tt.initCalls();
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Exactly once', mediaIds: [video], accountOverrides: privacy(account.id) });
    await api.publishing.drain();
    await api.publishing.drainAhead(10 * 60_000);
    const [only, ...more] = postsOf(user);
    expect(more).toEqual([]);
    expect(tt.initCalls() - inits).toBe(1);
    expect(await postDetail(api, u, id)).toMatchObject({ status: 'published', targets: [{ status: 'published', platformPostId: only?.postId }] });
  });

  it('reads FAILED beside error.code "ok" as a failure, with TikTok’s reason', async () => {
    const u = await userWithKey(api.db);
    const { account } = await connectTikTok(u, 'fay.tt');
    const video = await uploadMedia(api, u, files.mp4Noise4s, 'v.mp4', 'video/mp4', 'Noise');
    tt.failNextPublish('file_format_check_failed');
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Broken', mediaIds: [video], accountOverrides: privacy(account.id) });
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).targets[0]).toMatchObject({
      status: 'failed',
      error: { category: 'media_error', message: 'TikTok could not publish the media (file_format_check_failed)' },
    });
  });

  it("names the operator's unaudited app when TikTok refuses a public post for it", async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectTikTok(u, 'gus.tt');
    const video = await uploadMedia(api, u, files.mp4Noise4s, 'v.mp4', 'video/mp4', 'Noise');
    tt.unaudited = true;
    try {
      user.privacyLevelOptions = ['PUBLIC_TO_EVERYONE', 'SELF_ONLY'];
      const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Public', mediaIds: [video], accountOverrides: privacy(account.id) });
      await api.publishing.drain();
      const target = (await postDetail(api, u, id)).targets[0];
      expect(target?.status).toBe('failed');
      expect(target?.error?.message).toMatch(/audit|SELF_ONLY/);
      expect(postsOf(user)).toEqual([]);
    } finally {
      tt.unaudited = false;
    }
  });

  it("waits a day, uploading nothing, when the creator has posted TikTok's daily most", async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectTikTok(u, 'hal.tt');
    user.dailyPostCap = 0;
    const video = await uploadMedia(api, u, files.mp4Noise4s, 'v.mp4', 'video/mp4', 'Noise');
    const inits = tt.initCalls();
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Tomorrow', mediaIds: [video], accountOverrides: privacy(account.id) });
    await api.publishing.drain();
    const target = (await postDetail(api, u, id)).targets[0];
    expect(target).toMatchObject({ status: 'failed', error: { category: 'rate_limited', retrying: true } });
    expect(Date.parse(target?.error?.nextAttemptAt ?? '') - Date.now()).toBeGreaterThan(23 * 3_600_000);
    expect(tt.initCalls()).toBe(inits);
    expect(postsOf(user)).toEqual([]);
  });

  it('sends a video again under a new publish when TikTok never got its last chunk, and posts it once', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectTikTok(u, 'ivy.tt');
    const video = await uploadMedia(api, u, files.mp4Noise4s, 'v.mp4', 'video/mp4', 'Noise');
    tt.fail('upload', { kind: 'answer', status: 500 });
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Interrupted', mediaIds: [video], accountOverrides: privacy(account.id) });
    await api.publishing.drain();
    await api.publishing.drainAhead(10 * 60_000);
    const complete = postsOf(user).filter((p) => p.status === 'PUBLISH_COMPLETE');
    expect(complete).toHaveLength(1);
    expect(complete[0]?.bytes).toEqual(files.mp4Noise4s);
    expect(await postDetail(api, u, id)).toMatchObject({ status: 'published', targets: [{ status: 'published', platformPostId: complete[0]?.postId }] });
  });
});
