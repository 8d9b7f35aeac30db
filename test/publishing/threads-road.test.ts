import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApi, type Schemas } from '../support/api.js';
import { connectThroughConsent } from '../support/consent.js';
import { userWithKey, type TestUser } from '../support/fixtures.js';
import { makeMediaFiles, type MediaFiles } from '../support/media-files.js';
import { loseStoredFile, postDetail, publishNow, uploadMedia } from '../support/posts.js';
import { startThreadsFake, type ThreadsFake, type ThreadsUser } from '../support/threads-fake.js';

// The whole road to Threads: connect through Threads Login, publish with the worker, and assert
// what Threads (a fake written from its documentation, fetching media from Herald over HTTP) holds.
let th: ThreadsFake;
let files: MediaFiles;

beforeAll(async () => {
  th = await startThreadsFake();
  files = makeMediaFiles();
});
const api = useTestApi({
  listen: true,
  env: () => ({ HERALD_THREADS_CLIENT_ID: th.clientId, HERALD_THREADS_CLIENT_SECRET: th.clientSecret, HERALD_THREADS_BASE_URL: th.url }),
});
afterAll(async () => {
  await th?.close();
  files?.cleanup();
});

async function connectThreads(u: TestUser, username: string): Promise<{ account: Schemas['Account']; user: ThreadsUser }> {
  const user = th.addUser({ username, name: `${username} on Threads` });
  th.consentAs(user);
  const { connection, accounts } = await connectThroughConsent(api, u, { platform: 'threads' });
  const [account] = accounts;
  if (account === undefined) throw new Error(`not connected: ${JSON.stringify(connection)}`);
  return { account, user };
}

const postsOf = (user: ThreadsUser) => th.posts.filter((p) => p.userId === user.id);

describe('connecting a Threads account', () => {
  it('goes through Threads Login and keeps a 60-day token sealed, its end shown to the operator', async () => {
    const u = await userWithKey(api.db);
    const user = th.addUser({ username: 'ada.threads', name: 'Ada' });
    th.consentAs(user);
    const { connection, accounts } = await connectThroughConsent(api, u, { platform: 'threads' });
    expect(connection).toMatchObject({ platform: 'threads', status: 'connected', error: null, accountIds: [connection.accountId] });
    expect(accounts).toEqual([
      { id: connection.accountId, platform: 'threads', username: 'ada.threads', displayName: 'Ada', mode: 'live', health: 'ok', healthMessage: null },
    ]);
    expect(th.authorizations.at(-1)?.query).toMatchObject({ scope: 'threads_basic,threads_content_publish,threads_manage_replies', response_type: 'code' });
    const row = await api.db
      .selectFrom('accounts')
      .select(['platform_user_id', 'credentials_end_at'])
      .where('id', '=', connection.accountId ?? '')
      .executeTakeFirstOrThrow();
    expect(row.platform_user_id).toBe(user.id);
    expect((row.credentials_end_at?.getTime() ?? 0) - Date.now()).toBeGreaterThan(59 * 86_400_000);
  });
});

describe('publishing to Threads', () => {
  it('publishes a thread as a reply chain, with ThreadsFields on the first post and the first comment as the last reply', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectThreads(u, 'bo.threads');
    const id = await publishNow(api, u, {
      accountIds: [account.id],
      postType: 'thread',
      threadParts: { [account.id]: ['One: the start', 'Two: the middle'] },
      firstComment: 'Comments welcome',
      accountOverrides: [
        { accountId: account.id, fields: { replyControl: 'accounts_you_follow', topicTag: 'Herald', linkAttachment: 'https://herald.example.com' } },
      ],
    });
    await api.publishing.drain();
    const posts = postsOf(user);
    expect(posts.map((p) => [p.text, p.replyToId])).toEqual([
      ['One: the start', null],
      ['Two: the middle', posts[0]?.id],
      ['Comments welcome', posts[1]?.id],
    ]);
    expect(posts[0]).toMatchObject({
      mediaType: 'TEXT_POST',
      replyControl: 'accounts_you_follow',
      topicTag: 'Herald',
      linkAttachment: 'https://herald.example.com',
    });
    expect(await postDetail(api, u, id)).toMatchObject({
      status: 'published',
      targets: [{ status: 'published', platformPostId: posts[0]?.id, url: posts[0]?.permalink }],
    });
  });

  it('publishes one image with its alt text, fetched from Herald, and a carousel of an image and a video', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectThreads(u, 'cy.threads');
    const image = await uploadMedia(api, u, files.jpeg1080x1350, 'a.jpg', 'image/jpeg', 'A red rectangle');
    await publishNow(api, u, { accountIds: [account.id], caption: 'One picture', mediaIds: [image] });
    await api.publishing.drain();
    const second = await uploadMedia(api, u, files.png64, 'b.png', 'image/png', 'A blue square');
    const video = await uploadMedia(api, u, files.mp4Noise4s, 'v.mp4', 'video/mp4', 'Noise');
    await publishNow(api, u, { accountIds: [account.id], postType: 'carousel', caption: 'Two things', mediaIds: [second, video] });
    await api.publishing.drain();
    const [single, carousel] = postsOf(user);
    expect(single).toMatchObject({ mediaType: 'IMAGE', text: 'One picture', altTexts: ['A red rectangle'] });
    expect(th.fetches.find((f) => f.url === single?.children[0]?.url)).toMatchObject({ contentType: 'image/jpeg', bytes: files.jpeg1080x1350.length });
    expect(carousel).toMatchObject({ mediaType: 'CAROUSEL_ALBUM', text: 'Two things', children: [{ mediaType: 'IMAGE' }, { mediaType: 'VIDEO' }] });
  });

  it('publishes a thread part once when the answer to its publish is lost: the chain goes on from the part found', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectThreads(u, 'dee.threads');
    th.fail('publish', { kind: 'commitThenDrop' });
    const id = await publishNow(api, u, { accountIds: [account.id], postType: 'thread', threadParts: { [account.id]: ['Lost answer', 'Goes on'] } });
    await api.publishing.drain();
    await api.publishing.drainAhead(10 * 60_000);
    const posts = postsOf(user);
    expect(posts.map((p) => [p.text, p.replyToId])).toEqual([
      ['Lost answer', null],
      ['Goes on', posts[0]?.id],
    ]);
    expect([...th.containers.values()].filter((c) => c.userId === user.id && c.text === 'Lost answer')).toHaveLength(1);
    expect(await postDetail(api, u, id)).toMatchObject({ status: 'published', targets: [{ status: 'published', platformPostId: posts[0]?.id }] });
  });

  it("fails media_error with Threads' reason when a container errors", async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectThreads(u, 'eve.threads');
    th.failNextContainer('FAILED_PROCESSING_VIDEO');
    const video = await uploadMedia(api, u, files.mp4Noise4s, 'v.mp4', 'video/mp4', 'Noise');
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Will not process', mediaIds: [video] });
    await api.publishing.drain();
    const target = (await postDetail(api, u, id)).targets[0];
    expect(target).toMatchObject({
      status: 'failed',
      error: { category: 'media_error', retrying: false, message: 'Threads could not process the media: FAILED_PROCESSING_VIDEO' },
    });
    expect(postsOf(user)).toEqual([]);
  });

  it('fails media_error naming the URL when Threads cannot fetch the media from Herald', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectThreads(u, 'hal.threads');
    const gone = await uploadMedia(api, u, files.jpeg1080x1350, 'a.jpg', 'image/jpeg', 'Gone');
    await loseStoredFile(api, gone);
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Unfetchable', mediaIds: [gone] });
    await api.publishing.drain();
    const target = (await postDetail(api, u, id)).targets[0];
    expect(target).toMatchObject({ status: 'failed', error: { category: 'media_error', retrying: false } });
    expect(target?.error?.message).toContain('Threads could not fetch the media from http://127.0.0.1:');
    expect(target?.error?.message).toContain(`/media/${gone}?expires=`);
    expect(postsOf(user)).toEqual([]);
  });

  it('waits rather than fails when the day’s replies are used, publishing nothing of the thread', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectThreads(u, 'fay.threads');
    th.replyQuota = 0;
    try {
      const id = await publishNow(api, u, { accountIds: [account.id], postType: 'thread', threadParts: { [account.id]: ['Part one', 'Part two'] } });
      await api.publishing.drain();
      const target = (await postDetail(api, u, id)).targets[0];
      expect(target).toMatchObject({ status: 'failed', error: { category: 'rate_limited', retrying: true } });
      expect(target?.error?.message).toContain('replies of the last 24 hours that Threads allows');
      expect(postsOf(user)).toEqual([]);
    } finally {
      th.replyQuota = 1000;
    }
  });

  it('fails auth_expired and marks the account for reconnection when Threads refuses the token', async () => {
    const u = await userWithKey(api.db);
    const { account } = await connectThreads(u, 'gus.threads');
    th.expireAccessTokens();
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Too late' });
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).targets[0]).toMatchObject({ status: 'failed', error: { category: 'auth_expired', retrying: false } });
    const accounts = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key });
    expect(accounts.body.data.find((a) => a.id === account.id)?.health).toBe('needs_reconnect');
  });
});
