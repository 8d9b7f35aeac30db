import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApi, type Schemas } from '../support/api.js';
import { connectThroughConsent } from '../support/consent.js';
import { userWithKey, type TestUser } from '../support/fixtures.js';
import { makeMediaFiles, type MediaFiles } from '../support/media-files.js';
import { postDetail, publishNow, uploadMedia } from '../support/posts.js';
import { startRedditFake, type RedditFake } from '../support/reddit-fake.js';

// The whole road to Reddit: connect through its consent page, post with the worker, and assert what
// Reddit (a fake written from its archived API docs and peers' clients) holds.
let rd: RedditFake;
type RedditUser = { id: string; name: string };
let files: MediaFiles;

beforeAll(async () => {
  rd = await startRedditFake();
  rd.addSubreddit('heraldtest');
  files = makeMediaFiles();
});
const api = useTestApi({
  env: () => ({
    HERALD_REDDIT_CLIENT_ID: rd.clientId,
    HERALD_REDDIT_CLIENT_SECRET: rd.clientSecret,
    HERALD_REDDIT_BASE_URL: rd.url,
    HERALD_REDDIT_USERNAME: 'herald_dev-1',
  }),
});
afterAll(async () => {
  await rd?.close();
  files?.cleanup();
});

async function connectReddit(u: TestUser, name: string): Promise<{ account: Schemas['Account']; user: RedditUser }> {
  const user = rd.addUser({ name });
  rd.consentAs(user);
  const { connection, accounts } = await connectThroughConsent(api, u, { platform: 'reddit' });
  const [account] = accounts;
  if (account === undefined) throw new Error(`not connected: ${JSON.stringify(connection)}`);
  return { account, user };
}

const postsOf = (user: RedditUser) => rd.posts.filter((p) => p.author === user.name);
const onSub = (accountId: string, title: string, more: Record<string, unknown> = {}) => [{ accountId, fields: { subreddit: 'heraldtest', title, ...more } }];

describe('connecting a Reddit account', () => {
  it('asks for a permanent grant with the history scope, and connects the account', async () => {
    const u = await userWithKey(api.db);
    const user = rd.addUser({ name: 'ada_rd' });
    rd.consentAs(user);
    const { connection, accounts } = await connectThroughConsent(api, u, { platform: 'reddit' });
    expect(connection).toMatchObject({ platform: 'reddit', status: 'connected', error: null });
    expect(accounts).toEqual([expect.objectContaining({ platform: 'reddit', username: 'ada_rd', mode: 'live', health: 'ok' })]);
    expect(rd.authorizations.at(-1)?.query).toMatchObject({ duration: 'permanent', scope: 'identity submit read flair history', response_type: 'code' });
    // Every call named Herald's app and the developer, as Reddit's API rules ask (the fake refuses
    // any other form). The consent page is the person's browser, not Herald.
    const fromHerald = rd.requests.filter((r) => !r.path.startsWith('/api/v1/authorize'));
    expect(fromHerald.length).toBeGreaterThan(0);
    expect(new Set(fromHerald.map((r) => r.headers['user-agent']))).toEqual(new Set([`server:herald-${rd.clientId}:1.0 (by /u/herald_dev-1)`]));
  });
});

describe('posting to Reddit', () => {
  it('posts self text with title, flags and flair, then the first comment on the submission', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectReddit(u, 'bo_rd');
    const id = await publishNow(api, u, {
      accountIds: [account.id],
      caption: 'The body of the post',
      firstComment: 'Sources in the comments',
      accountOverrides: onSub(account.id, 'A title', { nsfw: true, spoiler: true, flairId: 'flair-1' }),
    });
    await api.publishing.drain();
    const [post, ...more] = postsOf(user);
    expect(more).toEqual([]);
    expect(post).toMatchObject({
      subreddit: 'heraldtest',
      kind: 'self',
      title: 'A title',
      text: 'The body of the post',
      nsfw: true,
      spoiler: true,
      flairId: 'flair-1',
    });
    expect(post?.comments.map((c) => c.text)).toEqual(['Sources in the comments']);
    expect(await postDetail(api, u, id)).toMatchObject({ status: 'published', targets: [{ status: 'published', platformPostId: `t3_${post?.id ?? ''}` }] });
  });

  it('uploads an image through the media lease, and records the post once Reddit lists it', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectReddit(u, 'cy_rd');
    const image = await uploadMedia(api, u, files.jpeg1080x1350, 'a.jpg', 'image/jpeg', 'Red');
    rd.mediaPolls = 2;
    const id = await publishNow(api, u, { accountIds: [account.id], caption: '', mediaIds: [image], accountOverrides: onSub(account.id, 'A red image') });
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).targets[0]?.error).toBeNull();
    const [post, ...more] = postsOf(user);
    expect(more).toEqual([]);
    expect(post).toMatchObject({ kind: 'image', title: 'A red image' });
    expect(post?.images[0]?.bytes).toEqual(files.jpeg1080x1350);
    expect(await postDetail(api, u, id)).toMatchObject({ status: 'published', targets: [{ status: 'published', platformPostId: `t3_${post?.id ?? ''}` }] });
  });

  it('posts a link with the caption as its body, even where the subreddit has had the link', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectReddit(u, 'lin_rd');
    const link = { url: 'https://example.com/story' };
    const first = await publishNow(api, u, { accountIds: [account.id], caption: 'Worth reading', accountOverrides: onSub(account.id, 'A story', link) });
    const again = await publishNow(api, u, { accountIds: [account.id], caption: '', accountOverrides: onSub(account.id, 'The story again', link) });
    await api.publishing.drain();
    // The two may go out in either order (two lanes).
    const byTitle = (title: string) => postsOf(user).filter((p) => p.title === title);
    const [story] = byTitle('A story');
    const [storyAgain] = byTitle('The story again');
    expect(postsOf(user)).toHaveLength(2);
    expect(story).toMatchObject({ kind: 'link', url: 'https://example.com/story', text: 'Worth reading' });
    expect(storyAgain).toMatchObject({ kind: 'link', url: 'https://example.com/story', text: '' });
    expect(await postDetail(api, u, first)).toMatchObject({ status: 'published', targets: [{ platformPostId: `t3_${story?.id ?? ''}` }] });
    expect(await postDetail(api, u, again)).toMatchObject({ status: 'published', targets: [{ platformPostId: `t3_${storyAgain?.id ?? ''}` }] });
  });

  it('uploads a video and its poster through the media lease, and records the post once Reddit lists it', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectReddit(u, 'vid_rd');
    const video = await uploadMedia(api, u, files.mp4Noise4s, 'v.mp4', 'video/mp4', 'Noise');
    rd.mediaPolls = 2;
    const id = await publishNow(api, u, {
      accountIds: [account.id],
      caption: 'What noise looks like',
      mediaIds: [video],
      accountOverrides: onSub(account.id, 'A noisy video'),
    });
    await api.publishing.drain();
    await api.publishing.drainAhead(60_000);
    const [post, ...more] = postsOf(user);
    expect(more).toEqual([]);
    expect(post).toMatchObject({ kind: 'video', title: 'A noisy video', text: 'What noise looks like' });
    expect(post?.video?.bytes).toEqual(files.mp4Noise4s);
    // The poster Herald sends is a PNG (Reddit wants one while the video processes).
    expect(post?.video?.poster.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(rd.submitCalls()).toBeGreaterThan(0);
    expect(await postDetail(api, u, id)).toMatchObject({ status: 'published', targets: [{ status: 'published', platformPostId: `t3_${post?.id ?? ''}` }] });
  });

  it('posts a gallery with the alt texts as captions', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectReddit(u, 'dee_rd');
    const first = await uploadMedia(api, u, files.jpeg1080x1350, 'a.jpg', 'image/jpeg', 'Red');
    const second = await uploadMedia(api, u, files.png64, 'b.png', 'image/png', 'Blue');
    await publishNow(api, u, {
      accountIds: [account.id],
      postType: 'carousel',
      caption: '',
      mediaIds: [first, second],
      accountOverrides: onSub(account.id, 'Two'),
    });
    await api.publishing.drain();
    const [post] = postsOf(user);
    expect(post).toMatchObject({ kind: 'gallery', title: 'Two' });
    expect(post?.images.map((i) => i.caption)).toEqual(['Red', 'Blue']);
  });

  it('posts once when the answer to the submit is lost: the account’s submissions are read and the post recorded', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectReddit(u, 'eve_rd');
    rd.fail('submit', { kind: 'commitThenDrop' });
    const calls = rd.submitCalls();
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Once', accountOverrides: onSub(account.id, 'Exactly once') });
    await api.publishing.drain();
    await api.publishing.drainAhead(10 * 60_000);
    const [only, ...more] = postsOf(user);
    expect(more).toEqual([]);
    expect(rd.submitCalls() - calls).toBe(1);
    expect(await postDetail(api, u, id)).toMatchObject({ status: 'published', targets: [{ status: 'published', platformPostId: `t3_${only?.id ?? ''}` }] });
  });

  it('reads RATELIMIT inside a 200 answer as rate_limited, waiting the minutes Reddit gives', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectReddit(u, 'fay_rd');
    rd.rateLimitNext(7);
    const before = Date.now();
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Later', accountOverrides: onSub(account.id, 'Slow down') });
    await api.publishing.drain();
    const target = (await postDetail(api, u, id)).targets[0];
    expect(target).toMatchObject({ status: 'failed', error: { category: 'rate_limited', retrying: true } });
    expect(Date.parse(target?.error?.nextAttemptAt ?? '') - before).toBeGreaterThan(6 * 60_000);
    expect(postsOf(user)).toEqual([]);
  });

  it('fails user_content with Reddit’s words for a subreddit that does not exist', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectReddit(u, 'gus_rd');
    const id = await publishNow(api, u, {
      accountIds: [account.id],
      caption: 'Nowhere',
      accountOverrides: [{ accountId: account.id, fields: { subreddit: 'nosuchsub', title: 'T' } }],
    });
    await api.publishing.drain();
    const target = (await postDetail(api, u, id)).targets[0];
    expect(target).toMatchObject({ status: 'failed', error: { category: 'user_content', retrying: false } });
    expect(target?.error?.message).toContain('SUBREDDIT_NOEXIST');
    expect(postsOf(user)).toEqual([]);
  });
});
