import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApi, type Schemas } from '../support/api.js';
import { connectThroughConsent } from '../support/consent.js';
import { userWithKey, type TestUser } from '../support/fixtures.js';
import { startInstagramFake, type InstagramFake, type InstagramUser } from '../support/instagram-fake.js';
import { metaErrors } from '../support/meta-fake-kit.js';
import { makeMediaFiles, type MediaFiles } from '../support/media-files.js';
import { loseStoredFile, postDetail, publishNow, uploadMedia } from '../support/posts.js';

// The whole road to Instagram: connect through the consent page, publish with the worker, and
// assert what Instagram (a fake written from its documentation, which fetches every media URL
// from Herald over HTTP as Meta's crawler does) received and holds.
let ig: InstagramFake;
let files: MediaFiles;

beforeAll(async () => {
  ig = await startInstagramFake();
  files = makeMediaFiles();
});
const api = useTestApi({
  listen: true,
  env: () => ({ HERALD_INSTAGRAM_CLIENT_ID: ig.clientId, HERALD_INSTAGRAM_CLIENT_SECRET: ig.clientSecret, HERALD_INSTAGRAM_BASE_URL: ig.url }),
});
afterAll(async () => {
  await ig?.close();
  files?.cleanup();
});

async function connectInstagram(u: TestUser, username: string): Promise<{ account: Schemas['Account']; user: InstagramUser }> {
  const user = ig.addUser({ username, name: `${username} on Instagram` });
  ig.consentAs(user);
  const { connection, accounts } = await connectThroughConsent(api, u, { platform: 'instagram' });
  expect(connection).toMatchObject({ status: 'connected', error: null });
  const [account] = accounts;
  if (account === undefined) throw new Error(`not connected: ${JSON.stringify(connection)}`);
  return { account, user };
}

const mediaOf = (user: InstagramUser) => ig.media.filter((m) => m.userId === user.id);
const jpeg = (u: TestUser, alt = 'A red rectangle') => uploadMedia(api, u, files.jpeg1080x1350, 'a.jpg', 'image/jpeg', alt);

describe('connecting an Instagram professional account', () => {
  it('goes through Instagram Login, keeps a 60-day token sealed, and lists the account with when it ends', async () => {
    const u = await userWithKey(api.db);
    const user = ig.addUser({ username: 'ada.ig', name: 'Ada' });
    ig.consentAs(user);
    const { connection, accounts, callback } = await connectThroughConsent(api, u, { platform: 'instagram' });
    expect(callback.status).toBe(200);
    expect(connection).toMatchObject({ platform: 'instagram', status: 'connected', accountIds: [connection.accountId] });
    expect(accounts).toEqual([
      { id: connection.accountId, platform: 'instagram', username: 'ada.ig', displayName: 'Ada', mode: 'live', health: 'ok', healthMessage: null },
    ]);
    const [authorization] = ig.authorizations.slice(-1);
    expect(authorization?.query).toMatchObject({
      client_id: ig.clientId,
      response_type: 'code',
      scope: 'instagram_business_basic,instagram_business_content_publish,instagram_business_manage_comments',
    });
    const row = await api.db
      .selectFrom('accounts')
      .select(['platform_user_id', 'credentials', 'credentials_end_at'])
      .where('id', '=', connection.accountId ?? '')
      .executeTakeFirstOrThrow();
    expect(row.platform_user_id).toBe(user.id);
    expect(row.credentials).toMatch(/^v1\./);
    expect((row.credentials_end_at?.getTime() ?? 0) - Date.now()).toBeGreaterThan(59 * 86_400_000);
  });

  it('ends the connection failed, with Instagram saying why, when the person refuses', async () => {
    const u = await userWithKey(api.db);
    ig.refuseNextConsent();
    const { connection, accounts } = await connectThroughConsent(api, u, { platform: 'instagram' });
    expect(connection).toMatchObject({
      status: 'failed',
      accountId: null,
      accountIds: [],
      error: 'The person did not allow access on Instagram (access_denied)',
    });
    expect(accounts).toEqual([]);
  });
});

describe('publishing to Instagram', () => {
  it('publishes one image with its caption, alt text and fields, Meta fetching it from Herald, then the first comment', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectInstagram(u, 'bo.ig');
    const image = await jpeg(u);
    const id = await publishNow(api, u, {
      accountIds: [account.id],
      caption: 'Red, as promised #colour',
      firstComment: 'More in the bio',
      mediaIds: [image],
      accountOverrides: [{ accountId: account.id, fields: { locationId: '110843418940484', collaborators: ['cy.ig'] } }],
    });
    await api.publishing.drain();
    const [published, ...more] = mediaOf(user);
    expect(more).toEqual([]);
    expect(published).toMatchObject({
      mediaType: 'IMAGE',
      mediaProductType: 'FEED',
      caption: 'Red, as promised #colour',
      locationId: '110843418940484',
      collaborators: ['cy.ig'],
      altTexts: ['A red rectangle'],
      comments: [{ text: 'More in the bio' }],
    });
    // Meta fetched the very bytes, as JPEG, from Herald's signed public URL (asking for a byte range, as its crawler does).
    const fetched = ig.fetches.filter((f) => f.url === published?.children[0]?.url);
    expect(fetched).toEqual([
      { url: expect.stringContaining(`/media/${image}?expires=`) as unknown, status: 206, contentType: 'image/jpeg', bytes: files.jpeg1080x1350.length },
    ]);
    const detail = await postDetail(api, u, id);
    expect(detail).toMatchObject({ status: 'published', targets: [{ status: 'published', platformPostId: published?.id, url: published?.permalink }] });
  });

  it('publishes a carousel of images and a video, waiting while the items process, without holding a worker', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectInstagram(u, 'cy.ig');
    const image = await jpeg(u, 'First');
    const video = await uploadMedia(api, u, files.mp4Noise4s, 'v.mp4', 'video/mp4', 'Second');
    ig.videoPolls = 3;
    const id = await publishNow(api, u, { accountIds: [account.id], postType: 'carousel', caption: 'Two of them', mediaIds: [image, video] });
    await api.publishing.drain();
    const [carousel] = mediaOf(user);
    expect(carousel).toMatchObject({ mediaType: 'CAROUSEL_ALBUM', caption: 'Two of them', children: [{ mediaType: 'IMAGE' }, { mediaType: 'VIDEO' }] });
    // The worker looked again while Meta processed the video: several status reads, one carousel, one publish.
    const container = ig.containers.get(carousel?.containerId ?? '');
    expect(container?.publishCalls).toBe(1);
    expect(ig.requests.filter((r) => r.method === 'POST' && r.path.includes(`/${user.id}/media_publish`))).toHaveLength(1);
    expect(await postDetail(api, u, id)).toMatchObject({ status: 'published', targets: [{ platformPostId: carousel?.id }] });
  });

  it('publishes a video as a Reel with shareToFeed and its cover frame, and a Story without a caption', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectInstagram(u, 'dee.ig');
    const video = await uploadMedia(api, u, files.mp4Noise4s, 'v.mp4', 'video/mp4', 'Noise');
    await publishNow(api, u, {
      accountIds: [account.id],
      postType: 'reel',
      caption: 'A reel',
      mediaIds: [video],
      accountOverrides: [{ accountId: account.id, fields: { shareToFeed: true, thumbOffsetMs: 1500 } }],
    });
    const image = await jpeg(u);
    await publishNow(api, u, { accountIds: [account.id], postType: 'story', mediaIds: [image] });
    await api.publishing.drain();
    // The story is live first: the reel's video takes longer to process.
    expect(mediaOf(user).map((m) => [m.mediaProductType, m.mediaType, m.caption, m.shareToFeed, m.thumbOffset])).toEqual([
      ['STORY', 'IMAGE', null, null, null],
      ['REELS', 'VIDEO', 'A reel', true, 1500],
    ]);
  });

  it('publishes once when the worker loses the answer to the publish call: the container is read, the media found and recorded', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectInstagram(u, 'eve.ig');
    const image = await jpeg(u);
    ig.fail('publish', { kind: 'commitThenDrop' });
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Exactly once', mediaIds: [image] });
    await api.publishing.drain();
    expect(mediaOf(user)).toHaveLength(1);
    expect((await postDetail(api, u, id)).targets[0]?.status).not.toBe('published');
    await api.publishing.drainAhead(10 * 60_000);
    const [only, ...more] = mediaOf(user);
    expect(more).toEqual([]);
    expect(ig.containers.get(only?.containerId ?? '')?.publishCalls).toBe(1);
    expect(await postDetail(api, u, id)).toMatchObject({
      status: 'published',
      targets: [{ status: 'published', platformPostId: only?.id, url: only?.permalink }],
    });
  });

  it('finds a Story whose publish answer was lost among the account’s stories, publishing it once', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectInstagram(u, 'ivy.ig');
    ig.fail('publish', { kind: 'commitThenDrop' });
    const id = await publishNow(api, u, { accountIds: [account.id], postType: 'story', mediaIds: [await jpeg(u)] });
    await api.publishing.drain();
    await api.publishing.drainAhead(10 * 60_000);
    const [story, ...more] = mediaOf(user);
    expect(more).toEqual([]);
    expect(story?.mediaProductType).toBe('STORY');
    expect(await postDetail(api, u, id)).toMatchObject({ status: 'published', targets: [{ status: 'published', platformPostId: story?.id }] });
  });

  it("fails media_error with Meta's reason when a container errors, and with the URL when Meta cannot fetch it", async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectInstagram(u, 'fay.ig');
    ig.failNextContainer(2207026);
    const broken = await publishNow(api, u, { accountIds: [account.id], caption: 'Broken', mediaIds: [await jpeg(u)] });
    await api.publishing.drain();
    const target = (await postDetail(api, u, broken)).targets[0];
    expect(target).toMatchObject({ status: 'failed', error: { category: 'media_error', retrying: false } });
    expect(target?.error?.message).toMatch(/^Instagram could not process the media: .*2207026/);

    // The stored file is gone: Herald's public URL answers 404, and Meta says it could not fetch it.
    const gone = await jpeg(u);
    await loseStoredFile(api, gone);
    const unfetchable = await publishNow(api, u, { accountIds: [account.id], caption: 'Unfetchable', mediaIds: [gone] });
    await api.publishing.drain();
    const failed = (await postDetail(api, u, unfetchable)).targets[0];
    expect(failed).toMatchObject({ status: 'failed', error: { category: 'media_error' } });
    expect(failed?.error?.message).toContain(`Instagram could not fetch the media from http://127.0.0.1:`);
    expect(failed?.error?.message).toContain(`/media/${gone}?expires=`);
    expect(mediaOf(user)).toEqual([]);
  });

  it("waits rather than fails when the day's publishing quota is used, creating no container", async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectInstagram(u, 'gus.ig');
    ig.publishQuota = 0;
    try {
      const containersBefore = ig.containers.size;
      const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Tomorrow, then', mediaIds: [await jpeg(u)] });
      await api.publishing.drain();
      const target = (await postDetail(api, u, id)).targets[0];
      expect(target).toMatchObject({ status: 'failed', error: { category: 'rate_limited', retrying: true } });
      expect(target?.error?.message).toContain('Instagram allows');
      expect(ig.containers.size).toBe(containersBefore);
      expect(mediaOf(user)).toEqual([]);
    } finally {
      ig.publishQuota = 50;
    }
  });

  it('fails auth_expired and marks the account for reconnection when Instagram refuses the token', async () => {
    const u = await userWithKey(api.db);
    const { account } = await connectInstagram(u, 'hal.ig');
    ig.expireAccessTokens();
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Too late', mediaIds: [await jpeg(u)] });
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).targets[0]).toMatchObject({ status: 'failed', error: { category: 'auth_expired', retrying: false } });
    const accounts = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key });
    expect(accounts.body.data.find((a) => a.id === account.id)?.health).toBe('needs_reconnect');
  });

  it("says the operator's Meta app lacks a permission, not retrying, when Meta answers so", async () => {
    const u = await userWithKey(api.db);
    const { account } = await connectInstagram(u, 'ian.ig');
    ig.fail('container', { kind: 'answer', ...metaErrors.permission('Application does not have permission for this action') });
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Not allowed', mediaIds: [await jpeg(u)] });
    await api.publishing.drain();
    const target = (await postDetail(api, u, id)).targets[0];
    expect(target).toMatchObject({ status: 'failed', error: { category: 'auth_expired', retrying: false } });
    expect(target?.error?.message).toMatch(/^Instagram refused: the server's Meta app lacks a permission it needs.*The operator must fix the app/);
    // The account is not the one at fault: it stays healthy.
    const accounts = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key });
    expect(accounts.body.data.find((a) => a.id === account.id)?.health).toBe('ok');
  });
});

describe('keeping an Instagram token alive', () => {
  it('refreshes the token of an account nobody publishes to in its last 30 days, and moves its end with it', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectInstagram(u, 'jan.ig');
    const endOf = async () =>
      (await api.db.selectFrom('accounts').select('credentials_end_at').where('id', '=', account.id).executeTakeFirstOrThrow()).credentials_end_at?.getTime() ??
      0;
    const firstEnd = await endOf();
    const refreshes = ig.refreshes();
    // 31 days on, for Herald's worker and for Instagram: 29 days left.
    const ahead = 31 * 86_400_000;
    ig.advance(ahead);
    api.publishing.runAhead(ahead);
    try {
      expect(await api.publishing.keepHouse()).toBe(true);
      expect(ig.refreshes()).toBeGreaterThan(refreshes);
      expect(await endOf()).toBeGreaterThan(firstEnd + ahead - 60_000);
      // Renewed tokens have 60 days again: the next housekeeping leaves them be.
      const after = ig.refreshes();
      expect(await api.publishing.keepHouse()).toBe(true);
      expect(ig.refreshes()).toBe(after);
      // Published with the renewed token, long after the first one would have ended.
      ig.advance(45 * 86_400_000);
      api.publishing.runAhead(ahead + 45 * 86_400_000);
      const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Still connected', mediaIds: [await jpeg(u)] });
      await api.publishing.drain();
      expect((await postDetail(api, u, id)).targets[0]?.status).toBe('published');
      expect(mediaOf(user)).toHaveLength(1);
    } finally {
      api.publishing.runAhead(0);
    }
  });
});
