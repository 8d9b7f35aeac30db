import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApi, type Schemas } from '../support/api.js';
import { connectThroughConsent } from '../support/consent.js';
import { userWithKey, type TestUser } from '../support/fixtures.js';
import { makeMediaFiles, type MediaFiles } from '../support/media-files.js';
import { postDetail, publishNow, uploadMedia } from '../support/posts.js';
import { startYouTubeFake, type YouTubeFake, type YouTubeUser } from '../support/youtube-fake.js';

// The whole road to YouTube: connect through Google's consent page, upload with the worker by the
// resumable protocol, and assert what YouTube (a fake written from the Data API's documentation) holds.
let yt: YouTubeFake;
let files: MediaFiles;

beforeAll(async () => {
  yt = await startYouTubeFake();
  files = makeMediaFiles();
});
const api = useTestApi({
  env: () => ({ HERALD_YOUTUBE_CLIENT_ID: yt.clientId, HERALD_YOUTUBE_CLIENT_SECRET: yt.clientSecret, HERALD_YOUTUBE_BASE_URL: yt.url }),
});
afterAll(async () => {
  await yt?.close();
  files?.cleanup();
});

async function connectYouTube(u: TestUser, name: string): Promise<{ account: Schemas['Account']; user: YouTubeUser }> {
  const user = yt.addUser({ name });
  yt.consentAs(user);
  const { connection, accounts } = await connectThroughConsent(api, u, { platform: 'youtube' });
  const [account] = accounts;
  if (account === undefined) throw new Error(`not connected: ${JSON.stringify(connection)}`);
  return { account, user };
}

const videosOf = (user: YouTubeUser) => yt.videos.filter((v) => v.channelId === user.channel.id);
const fields = (accountId: string, more: Record<string, unknown>) => [{ accountId, fields: more }];

describe('connecting a YouTube channel', () => {
  it('goes through Google with PKCE, offline access and a consent prompt, and connects the channel', async () => {
    const u = await userWithKey(api.db);
    const user = yt.addUser({ name: 'Ada Films' });
    yt.consentAs(user);
    const { connection, accounts } = await connectThroughConsent(api, u, { platform: 'youtube' });
    expect(connection).toMatchObject({ platform: 'youtube', status: 'connected', error: null });
    expect(accounts).toEqual([expect.objectContaining({ platform: 'youtube', displayName: 'Ada Films', mode: 'live', health: 'ok' })]);
    expect(yt.authorizations.at(-1)?.query).toMatchObject({
      access_type: 'offline',
      prompt: 'consent',
      code_challenge_method: 'S256',
      scope:
        'https://www.googleapis.com/auth/youtube.upload https://www.googleapis.com/auth/youtube.force-ssl https://www.googleapis.com/auth/youtube.readonly',
    });
    const row = await api.db
      .selectFrom('accounts')
      .select('platform_user_id')
      .where('id', '=', connection.accountId ?? '')
      .executeTakeFirstOrThrow();
    expect(row.platform_user_id).toBe(user.channel.id);
  });
});

describe('uploading to YouTube', () => {
  it('uploads a video with its fields by the resumable protocol, waits while it processes, then adds the first comment', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectYouTube(u, 'Bo Films');
    const video = await uploadMedia(api, u, files.mp4Noise4s, 'v.mp4', 'video/mp4', 'Noise');
    yt.videoPolls = 2;
    const id = await publishNow(api, u, {
      accountIds: [account.id],
      caption: 'Four seconds of noise',
      firstComment: 'Thanks for watching',
      mediaIds: [video],
      accountOverrides: fields(account.id, { title: 'Noise', privacyStatus: 'unlisted', tags: ['noise', 'test'] }),
    });
    await api.publishing.drain();
    const [made, ...more] = videosOf(user);
    expect(more).toEqual([]);
    expect(made).toMatchObject({
      title: 'Noise',
      description: 'Four seconds of noise',
      tags: ['noise', 'test'],
      privacyStatus: 'unlisted',
      madeForKids: false,
    });
    expect(made?.bytes).toEqual(files.mp4Noise4s);
    expect(made?.comments.map((c) => c.text)).toEqual(['Thanks for watching']);
    expect(await postDetail(api, u, id)).toMatchObject({
      status: 'published',
      targets: [{ status: 'published', platformPostId: made?.id, url: `https://www.youtube.com/watch?v=${made?.id ?? ''}` }],
    });
  });

  it('makes one video when the answer to the last chunk is lost: the session is probed and the video recorded', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectYouTube(u, 'Cy Films');
    const video = await uploadMedia(api, u, files.mp4Noise4s, 'v.mp4', 'video/mp4', 'Noise');
    yt.fail('upload', { kind: 'commitThenDrop' });
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Exactly one video', mediaIds: [video] });
    await api.publishing.drain();
    await api.publishing.drainAhead(10 * 60_000);
    const [only, ...more] = videosOf(user);
    expect(more).toEqual([]);
    // Without fields: the caption's first line as the title, public.
    expect(only).toMatchObject({ title: 'Exactly one video', privacyStatus: 'public' });
    expect(await postDetail(api, u, id)).toMatchObject({ status: 'published', targets: [{ status: 'published', platformPostId: only?.id }] });
  });

  it('resumes an interrupted upload from the session, asking YouTube what it holds first, and makes one video', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectYouTube(u, 'Fay Films');
    const video = await uploadMedia(api, u, files.mp4Noise4s, 'v.mp4', 'video/mp4', 'Noise');
    yt.fail('upload', { kind: 'answer', status: 503 });
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Interrupted', mediaIds: [video] });
    await api.publishing.drain();
    expect(videosOf(user)).toEqual([]);
    const sessionsBefore = yt.sessions.size;
    await api.publishing.drainAhead(10 * 60_000);
    const [only, ...more] = videosOf(user);
    expect(more).toEqual([]);
    expect(only?.bytes).toEqual(files.mp4Noise4s);
    // The same session carried on: no second one was opened.
    expect(yt.sessions.size).toBe(sessionsBefore);
    const probes = yt.requests.filter((r) => r.method === 'PUT' && r.headers['content-range'] === `bytes */${files.mp4Noise4s.length}`);
    expect(probes.length).toBeGreaterThanOrEqual(1);
    expect(await postDetail(api, u, id)).toMatchObject({ status: 'published', targets: [{ status: 'published', platformPostId: only?.id }] });
  });

  it('finds the video among the channel’s uploads when the session vanished after its last chunk went', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectYouTube(u, 'Gus Films');
    const video = await uploadMedia(api, u, files.mp4Noise4s, 'v.mp4', 'video/mp4', 'Noise');
    yt.fail('upload', { kind: 'commitThenDrop' });
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Vanished session', mediaIds: [video] });
    await api.publishing.drain();
    for (const [sessionId, session] of yt.sessions) if (session.channelId === user.channel.id) yt.expireSession(sessionId);
    await api.publishing.drainAhead(10 * 60_000);
    const [only, ...more] = videosOf(user);
    expect(more).toEqual([]);
    expect(await postDetail(api, u, id)).toMatchObject({ status: 'published', targets: [{ status: 'published', platformPostId: only?.id }] });
  });

  it("waits until midnight Pacific when the project's daily upload quota is used", async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectYouTube(u, 'Dee Films');
    const video = await uploadMedia(api, u, files.mp4Noise4s, 'v.mp4', 'video/mp4', 'Noise');
    yt.fail('insert', {
      kind: 'answer',
      status: 403,
      body: {
        error: {
          code: 403,
          message: 'The request cannot be completed because you have exceeded your quota.',
          errors: [{ domain: 'youtube.quota', reason: 'quotaExceeded' }],
        },
      },
    });
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Tomorrow', mediaIds: [video] });
    await api.publishing.drain();
    const target = (await postDetail(api, u, id)).targets[0];
    expect(target).toMatchObject({ status: 'failed', error: { category: 'rate_limited', retrying: true } });
    expect(target?.error?.message).toContain('resets at midnight Pacific time');
    expect(Date.parse(target?.error?.nextAttemptAt ?? '') - Date.now()).toBeLessThanOrEqual(86_400_000);
    expect(videosOf(user)).toEqual([]);
  });

  it('names the 7-day "Testing" consent screen when Google has ended the refresh token', async () => {
    const u = await userWithKey(api.db);
    const { account } = await connectYouTube(u, 'Eve Films');
    yt.testingConsent = true;
    try {
      yt.advance(8 * 86_400_000);
      yt.expireAccessTokens();
      const video = await uploadMedia(api, u, files.mp4Noise4s, 'v.mp4', 'video/mp4', 'Noise');
      const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Too late', mediaIds: [video] });
      await api.publishing.drain();
      const target = (await postDetail(api, u, id)).targets[0];
      expect(target).toMatchObject({ status: 'failed', error: { category: 'auth_expired', retrying: false } });
      expect(target?.error?.message).toContain('"Testing"');
      const accounts = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key });
      expect(accounts.body.data.find((a) => a.id === account.id)?.health).toBe('needs_reconnect');
    } finally {
      yt.testingConsent = false;
    }
  });
});
