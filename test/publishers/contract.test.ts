import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxPublisher } from '../../src/adapters/platforms/sandbox.js';
import { createBlueskyPublisher, type BlueskyCredentials } from '../../src/adapters/platforms/bluesky/publisher.js';
import { createMastodonPublisher } from '../../src/adapters/platforms/mastodon/publisher.js';
import { createLinkedInPublisher } from '../../src/adapters/platforms/linkedin/publisher.js';
import { createFacebookPublisher } from '../../src/adapters/platforms/meta/facebook.js';
import { createInstagramPublisher } from '../../src/adapters/platforms/meta/instagram.js';
import { createThreadsPublisher } from '../../src/adapters/platforms/meta/threads.js';
import { createPinterestApi, pinterestOAuth } from '../../src/adapters/platforms/pinterest/api.js';
import { createPinterestPublisher } from '../../src/adapters/platforms/pinterest/publisher.js';
import { createRedditApi, redditOAuth, withUserAgent } from '../../src/adapters/platforms/reddit/api.js';
import { createRedditPublisher } from '../../src/adapters/platforms/reddit/publisher.js';
import { tiktokOAuth } from '../../src/adapters/platforms/tiktok/api.js';
import { createTikTokPublisher } from '../../src/adapters/platforms/tiktok/publisher.js';
import { createYouTubeApi, youTubeOAuth } from '../../src/adapters/platforms/youtube/api.js';
import { createYouTubePublisher } from '../../src/adapters/platforms/youtube/publisher.js';
import { createOAuthClient } from '../../src/adapters/platforms/oauth.js';
import { createXApi, xOAuth } from '../../src/adapters/platforms/x/api.js';
import { createXPublisher } from '../../src/adapters/platforms/x/publisher.js';
import type {
  MediaToPublish,
  PartToPublish,
  PublishAccount,
  Publisher,
  PublishHooks,
  PublishOutcome,
  PublishRequest,
} from '../../src/domain/ports/publisher.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { startFacebookFake, type FacebookFake } from '../support/facebook-fake.js';
import { startInstagramFake, type InstagramFake } from '../support/instagram-fake.js';
import { startLinkedInFake, type LinkedInFake } from '../support/linkedin-fake.js';
import { startMastodonFake, type MastodonFake } from '../support/mastodon-fake.js';
import { startPinterestFake, type PinterestFake } from '../support/pinterest-fake.js';
import { startRedditFake, type RedditFake } from '../support/reddit-fake.js';
import { startThreadsFake, type ThreadsFake } from '../support/threads-fake.js';
import { startTikTokFake, type TikTokFake } from '../support/tiktok-fake.js';
import { startYouTubeFake, type YouTubeFake } from '../support/youtube-fake.js';
import { startXFake, type XFake } from '../support/x-fake.js';
import { startTestPds, type TestPds } from '../support/pds.js';
import { solidPng } from '../support/png.js';

/**
 * What every publisher promises the publishing road, checked against its platform's fake (the
 * sandbox against its outbox table, Bluesky against a real PDS, Mastodon against the fake written
 * from its documentation). A new platform's publisher joins this list with a harness of its own.
 */
interface Harness<C> {
  publisher: () => Publisher<C>;
  /** A fresh account on the platform, connected. */
  account(): Promise<{ account: PublishAccount; credentials: C }>;
  /** How many posts the platform holds for the account with this text. */
  posts(account: PublishAccount, credentials: C, text: string): Promise<number>;
  /** The next post call is carried out by the platform and its answer lost (the connection cut). */
  loseNextAnswer?(): void;
  /** The credentials with their access token expired, for platforms whose tokens refresh. */
  expire?(credentials: C): C;
  /** How many token refreshes the platform has seen. */
  refreshes?(): number;
  /** Media the platform takes a while to process, and how to let it finish. */
  slowMedia?(): { media: MediaToPublish; finish(): void };
  /** What every post of this platform must carry (Instagram posts need an image); none by default. */
  requiredMedia?(): MediaToPublish[];
}

let database: TestDatabase;
let pds: TestPds;
let proxy: FaultProxy;
let mastodon: MastodonFake;
let x: XFake;
let linkedin: LinkedInFake;
let instagram: InstagramFake;
let facebook: FacebookFake;
let threads: ThreadsFake;
let pinterest: PinterestFake;
let youtube: YouTubeFake;
let tiktok: TikTokFake;
let reddit: RedditFake;
/** Serves a JPEG for the platforms that fetch media by URL, as Herald's public media URLs do. */
let mediaServer: { url: string; close(): Promise<void> };
const png = solidPng(16, 16);
let names = 0;

beforeAll(async () => {
  [database, pds, mastodon, x, linkedin, instagram, facebook, threads, pinterest, youtube, tiktok, reddit, mediaServer] = await Promise.all([
    createTestDatabase(),
    startTestPds(),
    startMastodonFake(),
    startXFake(),
    startLinkedInFake(),
    startInstagramFake({ imagePolls: 0 }),
    startFacebookFake(),
    startThreadsFake({ imagePolls: 0 }),
    startPinterestFake(),
    startYouTubeFake({ videoPolls: 0 }),
    startTikTokFake({ processingPolls: 0 }),
    startRedditFake(),
    serveJpeg(),
  ]);
  proxy = await startFaultProxy(pds.url);
}, 180_000);
afterAll(async () => {
  await proxy?.close();
  await Promise.all([
    pds?.close(),
    mastodon?.close(),
    x?.close(),
    linkedin?.close(),
    instagram?.close(),
    facebook?.close(),
    mediaServer?.close(),
    database?.close(),
  ]);
});

function image(fields: Partial<MediaToPublish> = {}): MediaToPublish {
  return {
    id: `med_${randomBytes(4).toString('hex')}`,
    kind: 'image',
    mime: 'image/png',
    bytes: png.length,
    width: 16,
    height: 16,
    durationMs: null,
    altText: null,
    open: () => Promise.resolve(Readable.from([png])),
    publicUrl: () => 'https://herald.invalid/media/med_1',
    ...fields,
  };
}

/**
 * The engine's side of the seam, in memory: credentials refreshed one at a time (a refresh that
 * waited hands back the one just made), parts recorded as they are published or progress.
 */
function road<C>(initial: C) {
  let stored = { credentials: initial, version: 0 };
  let turn = Promise.resolve();
  const progress = new Map<number, string | null>();
  const hooks = (seen: { version: number }): PublishHooks<C> => ({
    refreshCredentials(refresh) {
      const mine = turn.then(async () => {
        if (stored.version !== seen.version) return stored.credentials;
        stored = { credentials: await refresh(stored.credentials), version: stored.version + 1 };
        return stored.credentials;
      });
      turn = mine.then(
        () => undefined,
        () => undefined,
      );
      return mine;
    },
    partPublished: () => Promise.resolve(),
    partProgressed: (index, value) => {
      progress.set(index, value);
      return Promise.resolve();
    },
  });
  return { hooks, progress, stored: () => stored };
}

/** The platform fields an account's posts carry (a Pinterest board), by account id; none for most. */
const fieldsOf = new Map<string, Record<string, unknown>>();

function request<C>(account: PublishAccount, credentials: C, parts: PartToPublish[], inDoubt = false): PublishRequest<C> {
  return { account, credentials, parts, postType: 'post', fields: fieldsOf.get(account.id) ?? {}, firstAttemptAt: new Date(), inDoubt, now: new Date() };
}

function part(publisher: Publisher<unknown>, text: string, media: MediaToPublish[] = []): PartToPublish {
  return { index: 0, text, media, material: publisher.newPartMaterial(new Date()), published: null, progress: null };
}

/** A JPEG served over HTTP on 127.0.0.1, with its exact type and length, as Herald's public media route serves one. */
async function serveJpeg(): Promise<{ url: string; close(): Promise<void> }> {
  const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), randomBytes(1020), Buffer.from([0xff, 0xd9])]);
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': jpeg.length });
    res.end(req.method === 'HEAD' ? undefined : jpeg);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/photo.jpg`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** An image a platform fetches by URL from the served JPEG. */
function fetchedJpeg(): MediaToPublish {
  return image({ mime: 'image/jpeg', bytes: 1026, publicUrl: () => mediaServer.url });
}

/** What the engine does with an attempt in doubt: ask the platform first, when the publisher can. */
async function retryInDoubt<C>(publisher: Publisher<C>, req: PublishRequest<C>, hooks: PublishHooks<C>): Promise<PublishOutcome> {
  const [first] = req.parts;
  if (publisher.reconcile !== undefined && first !== undefined) {
    const found = await publisher.reconcile(req, first, hooks);
    if (found.kind === 'found') return { kind: 'published', parts: [found.part] };
    if (found.kind !== 'absent') return { kind: 'unknown', message: found.kind };
  }
  return publisher.publish(req, hooks);
}

const harnesses: [string, Harness<unknown>][] = [
  [
    'sandbox',
    {
      publisher: () => createSandboxPublisher(database.db),
      account() {
        names += 1;
        return Promise.resolve({ account: { id: `acc_contract${names}`, platform: 'x', username: `user${names}`, platformUserId: null }, credentials: null });
      },
      async posts(account, _credentials, text) {
        return (
          await database.db.selectFrom('sandbox_outbox').select('platform_post_id').where('account_id', '=', account.id).where('text', '=', text).execute()
        ).length;
      },
    },
  ],
  [
    'bluesky',
    {
      publisher: () => createBlueskyPublisher({ fetch, requestTimeoutMs: 15_000 }),
      async account() {
        names += 1;
        const created = await pds.createAccount(`contract${names}`);
        const { credentials } = await createBlueskyPublisher({ fetch }).connect({
          service: pds.url,
          identifier: created.handle,
          appPassword: created.appPassword,
        });
        return {
          account: { id: `acc_b${names}`, platform: 'bluesky', username: created.handle, platformUserId: created.did },
          credentials: { ...credentials, service: proxy.url },
        };
      },
      async posts(account, _credentials, text) {
        return (await pds.listRecords(account.platformUserId ?? '')).filter((record) => record.value.text === text).length;
      },
      loseNextAnswer() {
        let lost = false;
        proxy.plan((req) => (!lost && req.path.endsWith('repo.putRecord') ? ((lost = true), { kind: 'commitThenDestroy' }) : undefined));
      },
      expire: (credentials) => ({ ...(credentials as BlueskyCredentials), accessJwt: pds.expiredAccessJwt((credentials as BlueskyCredentials).did) }),
      refreshes: () => proxy.requests.filter((r) => r.path.endsWith('server.refreshSession')).length,
    },
  ],
  [
    'mastodon',
    {
      publisher: () => createMastodonPublisher({ fetch, requestTimeoutMs: 15_000 }),
      async account() {
        names += 1;
        const who = mastodon.addAccount(`contract${names}`);
        const connected = await createMastodonPublisher({ fetch }).connect({ instance: mastodon.url, accessToken: who.token });
        return {
          account: { id: `acc_m${names}`, platform: 'mastodon', username: connected.username, platformUserId: connected.platformUserId },
          credentials: connected.credentials,
        };
      },
      posts(account, _credentials, text) {
        const id = (account.platformUserId ?? '').split('@')[0];
        return Promise.resolve(mastodon.statuses.filter((s) => s.accountId === id && s.text === text).length);
      },
      loseNextAnswer: () => mastodon.fail({ on: 'statuses', kind: 'commitThenDrop' }),
      slowMedia() {
        mastodon.videoProcessing.polls = 1000;
        const media = image({ kind: 'video', mime: 'video/mp4', id: `med_${randomBytes(4).toString('hex')}` });
        return {
          media,
          finish: () => {
            for (const m of mastodon.media.values()) m.pollsLeft = 0;
            mastodon.videoProcessing.polls = 2;
          },
        };
      },
    },
  ],
  [
    'x',
    {
      publisher: () =>
        createXPublisher({
          fetch,
          baseUrl: x.url,
          oauth: createOAuthClient(xOAuth(createXApi(fetch, x.url)), { clientId: x.clientId, clientSecret: x.clientSecret }, { fetch, baseUrl: x.url }),
        }),
      account() {
        names += 1;
        const user = x.addUser({ username: `contract${names}` });
        const tokens = x.grant(user);
        const credentials = { ...tokens, expiresAt: new Date(Date.now() + 2 * 3_600_000).toISOString() };
        return Promise.resolve({ account: { id: `acc_x${names}`, platform: 'x', username: user.username, platformUserId: user.id }, credentials });
      },
      posts: (account, _credentials, text) => Promise.resolve(x.posts.filter((p) => p.authorId === account.platformUserId && p.text === text).length),
      loseNextAnswer: () => x.fail('tweets', { kind: 'commitThenDrop' }),
      expire(credentials) {
        x.expireAccessTokens();
        return credentials;
      },
      refreshes: () => x.refreshes(),
      slowMedia() {
        x.videoPolls = 1000;
        return {
          media: image({ kind: 'video', mime: 'video/mp4' }),
          finish: () => {
            for (const m of x.media.values()) m.pollsLeft = 0;
            x.videoPolls = 2;
          },
        };
      },
    },
  ],
  [
    'linkedin',
    {
      publisher: () => createLinkedInPublisher({ fetch, baseUrl: linkedin.url, version: '202610' }),
      account() {
        names += 1;
        const member = linkedin.addMember({ name: `Contract ${names}` });
        const credentials = { accessToken: linkedin.issueToken(member), refreshToken: null, expiresAt: new Date(Date.now() + 60 * 86_400_000).toISOString() };
        return Promise.resolve({ account: { id: `acc_l${names}`, platform: 'linkedin', username: member.name, platformUserId: member.sub }, credentials });
      },
      posts: (account, _credentials, text) =>
        Promise.resolve(linkedin.posts.filter((p) => p.author === `urn:li:person:${account.platformUserId ?? ''}` && p.commentary === text).length),
      loseNextAnswer: () => linkedin.fail('posts', { kind: 'commitThenDrop' }),
      slowMedia() {
        linkedin.videoProcessing.polls = 1000;
        return {
          media: image({ kind: 'video', mime: 'video/mp4' }),
          finish: () => {
            for (const v of linkedin.videos.values()) v.pollsLeft = 0;
            linkedin.videoProcessing.polls = 2;
          },
        };
      },
    },
  ],
  [
    'instagram',
    {
      publisher: () => createInstagramPublisher({ fetch, baseUrl: instagram.url, version: 'v25.0', app: undefined, publicUrlProblem: () => null }),
      account() {
        names += 1;
        const user = instagram.addUser({ username: `contract${names}` });
        const credentials = instagram.grant(user);
        return Promise.resolve({ account: { id: `acc_i${names}`, platform: 'instagram', username: user.username, platformUserId: user.id }, credentials });
      },
      posts: (account, _credentials, text) => Promise.resolve(instagram.media.filter((m) => m.userId === account.platformUserId && m.caption === text).length),
      loseNextAnswer: () => instagram.fail('publish', { kind: 'commitThenDrop' }),
      requiredMedia: () => [fetchedJpeg()],
      slowMedia() {
        instagram.imagePolls = 1000;
        return {
          media: fetchedJpeg(),
          finish: () => {
            for (const c of instagram.containers.values()) if (c.state === 'IN_PROGRESS') c.pollsLeft = 0;
            instagram.imagePolls = 0;
          },
        };
      },
    },
  ],
  [
    'facebook',
    {
      publisher: () => createFacebookPublisher({ fetch, baseUrl: facebook.url, version: 'v25.0', app: undefined }),
      account() {
        names += 1;
        const user = facebook.addUser({ name: `Contract ${names}` });
        const page = facebook.addPage(user, { name: `Contract Page ${names}` });
        return Promise.resolve({
          account: { id: `acc_f${names}`, platform: 'facebook', username: page.name, platformUserId: page.id },
          credentials: { pageToken: facebook.pageToken(page) },
        });
      },
      posts: (account, _credentials, text) => Promise.resolve(facebook.posts.filter((p) => p.pageId === account.platformUserId && p.message === text).length),
      loseNextAnswer: () => facebook.fail('feed', { kind: 'commitThenDrop' }),
      slowMedia() {
        facebook.videoPolls = 1000;
        // Facebook refuses a video under 1 KB.
        const bytes = randomBytes(2048);
        return {
          media: image({ kind: 'video', mime: 'video/mp4', bytes: bytes.length, open: () => Promise.resolve(Readable.from([bytes])) }),
          finish: () => {
            for (const v of facebook.videos.values()) v.pollsLeft = 0;
            facebook.videoPolls = 2;
          },
        };
      },
    },
  ],
  [
    'threads',
    {
      publisher: () => createThreadsPublisher({ fetch, baseUrl: threads.url, app: undefined, publicUrlProblem: () => null }),
      account() {
        names += 1;
        const user = threads.addUser({ username: `contract${names}` });
        const credentials = threads.grant(user);
        return Promise.resolve({ account: { id: `acc_t${names}`, platform: 'threads', username: user.username, platformUserId: user.id }, credentials });
      },
      posts: (account, _credentials, text) => Promise.resolve(threads.posts.filter((p) => p.userId === account.platformUserId && p.text === text).length),
      loseNextAnswer: () => threads.fail('publish', { kind: 'commitThenDrop' }),
      slowMedia() {
        threads.imagePolls = 1000;
        return {
          media: fetchedJpeg(),
          finish: () => {
            for (const c of threads.containers.values()) if (c.state === 'IN_PROGRESS') c.pollsLeft = 0;
            threads.imagePolls = 0;
          },
        };
      },
    },
  ],
  [
    'pinterest',
    {
      publisher: () =>
        createPinterestPublisher({
          fetch,
          baseUrl: pinterest.url,
          oauth: createOAuthClient(
            pinterestOAuth(createPinterestApi(fetch, pinterest.url)),
            { clientId: pinterest.clientId, clientSecret: pinterest.clientSecret },
            { fetch, baseUrl: pinterest.url },
          ),
          publicUrlProblem: () => null,
        }),
      account() {
        names += 1;
        const user = pinterest.addUser({ username: `contract${names}` });
        const board = pinterest.addBoard(user, { name: 'Contract' });
        const id = `acc_p${names}`;
        fieldsOf.set(id, { boardId: board.id });
        const credentials = { ...pinterest.grant(user), expiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString() };
        return Promise.resolve({ account: { id, platform: 'pinterest', username: user.username, platformUserId: user.id }, credentials });
      },
      posts: (account, _credentials, text) =>
        Promise.resolve(pinterest.pins.filter((p) => p.userId === account.platformUserId && p.description === text).length),
      loseNextAnswer: () => pinterest.fail('pins', { kind: 'commitThenDrop' }),
      requiredMedia: () => [fetchedJpeg()],
      expire(credentials) {
        pinterest.expireAccessTokens();
        return credentials;
      },
      refreshes: () => pinterest.refreshes(),
      slowMedia() {
        pinterest.videoPolls = 1000;
        return {
          media: image({ kind: 'video', mime: 'video/mp4' }),
          finish: () => {
            for (const m of pinterest.media.values()) m.pollsLeft = 0;
            pinterest.videoPolls = 2;
          },
        };
      },
    },
  ],
  [
    'youtube',
    {
      publisher: () =>
        createYouTubePublisher({
          fetch,
          baseUrl: youtube.url,
          oauth: createOAuthClient(
            youTubeOAuth(createYouTubeApi(fetch, youtube.url)),
            { clientId: youtube.clientId, clientSecret: youtube.clientSecret },
            { fetch, baseUrl: youtube.url },
          ),
        }),
      account() {
        names += 1;
        const user = youtube.addUser({ name: `Contract ${names}` });
        const credentials = { ...youtube.grant(user), expiresAt: new Date(Date.now() + 3_600_000).toISOString() };
        return Promise.resolve({ account: { id: `acc_y${names}`, platform: 'youtube', username: user.name, platformUserId: user.channel.id }, credentials });
      },
      posts: (account, _credentials, text) =>
        Promise.resolve(youtube.videos.filter((v) => v.channelId === account.platformUserId && v.description === text).length),
      loseNextAnswer: () => youtube.fail('upload', { kind: 'commitThenDrop' }),
      requiredMedia: () => [image({ kind: 'video', mime: 'video/mp4' })],
      expire(credentials) {
        youtube.expireAccessTokens();
        return credentials;
      },
      refreshes: () => youtube.refreshes(),
      slowMedia() {
        youtube.videoPolls = 1000;
        return {
          media: image({ kind: 'video', mime: 'video/mp4' }),
          finish: () => {
            youtube.videoPolls = 0;
            youtube.finishProcessing();
          },
        };
      },
    },
  ],
  [
    'tiktok',
    {
      publisher: () =>
        createTikTokPublisher({
          fetch,
          baseUrl: tiktok.url,
          oauth: tiktokOAuth(fetch, tiktok.url, { clientId: tiktok.clientKey, clientSecret: tiktok.clientSecret }),
          publicUrlProblem: () => null,
        }),
      account() {
        names += 1;
        const user = tiktok.addUser({ username: `contract${names}` });
        const id = `acc_t${names}k`;
        fieldsOf.set(id, { privacyLevel: 'SELF_ONLY' });
        const credentials = { ...tiktok.grant(user), expiresAt: new Date(Date.now() + 7_200_000).toISOString() };
        return Promise.resolve({ account: { id, platform: 'tiktok', username: user.username, platformUserId: user.openId }, credentials });
      },
      posts: (account, _credentials, text) => Promise.resolve(tiktok.posts.filter((p) => p.userOpenId === account.platformUserId && p.title === text).length),
      loseNextAnswer: () => tiktok.fail('upload', { kind: 'commitThenDrop' }),
      requiredMedia: () => [image({ kind: 'video', mime: 'video/mp4' })],
      expire(credentials) {
        tiktok.expireAccessTokens();
        return credentials;
      },
      refreshes: () => tiktok.refreshes(),
      slowMedia() {
        tiktok.processingPolls = 1000;
        return {
          media: image({ kind: 'video', mime: 'video/mp4' }),
          finish: () => {
            tiktok.processingPolls = 0;
            tiktok.finishProcessing();
          },
        };
      },
    },
  ],
  [
    'reddit',
    {
      publisher: () => {
        const redditFetch = withUserAgent(fetch, reddit.clientId, 'herald_dev');
        return createRedditPublisher({
          fetch: redditFetch,
          baseUrl: reddit.url,
          oauth: createOAuthClient(
            redditOAuth(createRedditApi(redditFetch, reddit.url)),
            { clientId: reddit.clientId, clientSecret: reddit.clientSecret },
            { fetch: redditFetch, baseUrl: reddit.url },
          ),
        });
      },
      account() {
        names += 1;
        const user = reddit.addUser({ name: `contract${names}` });
        const id = `acc_r${names}`;
        if (!reddit.subreddits.some((sr) => sr.name === 'contract')) reddit.addSubreddit('contract');
        fieldsOf.set(id, { subreddit: 'contract', title: `Contract ${names}` });
        const credentials = { ...reddit.grant(user), expiresAt: new Date(Date.now() + 3_600_000).toISOString() };
        return Promise.resolve({ account: { id, platform: 'reddit', username: user.name, platformUserId: user.id }, credentials });
      },
      posts: (account, _credentials, text) => Promise.resolve(reddit.posts.filter((p) => p.author === account.username && p.text === text).length),
      loseNextAnswer: () => reddit.fail('submit', { kind: 'commitThenDrop' }),
      expire(credentials) {
        reddit.expireAccessTokens();
        return credentials;
      },
      refreshes: () => reddit.refreshes(),
    },
  ],
];

describe.each(harnesses)("the %s publisher keeps the seam's promises", (_name, harness) => {
  it('never throws: media that cannot be read is an outcome', async () => {
    const publisher = harness.publisher();
    const { account, credentials } = await harness.account();
    const unreadable = image({ open: () => Promise.reject(new Error('gone')) });
    const outcome = await publisher.publish(
      request(account, credentials, [part(publisher, 'unreadable media', [unreadable])]),
      road(credentials).hooks({ version: 0 }),
    );
    expect(['published', 'failed']).toContain(outcome.kind);
  });

  it('publishes the same material once, however often it is sent', async () => {
    const publisher = harness.publisher();
    const { account, credentials } = await harness.account();
    const once = part(publisher, 'the same material', harness.requiredMedia?.());
    const engine = road(credentials);
    const hooks = engine.hooks({ version: 0 });
    const first = await publisher.publish(request(account, credentials, [once]), hooks);
    // Sent again as the engine sends an attempt in doubt (with what the part recorded): asked about first, where the platform can be asked.
    const again = await retryInDoubt(publisher, request(account, credentials, [{ ...once, progress: engine.progress.get(0) ?? null }], true), hooks);
    expect([first.kind, again.kind]).toEqual(['published', 'published']);
    expect(await harness.posts(account, credentials, 'the same material')).toBe(1);
  });

  it('gives one post for an answer lost and a retry', async () => {
    const publisher = harness.publisher();
    const { account, credentials } = await harness.account();
    const lost = part(publisher, 'answer lost', harness.requiredMedia?.());
    const engine = road(credentials);
    const hooks = engine.hooks({ version: 0 });
    harness.loseNextAnswer?.();
    const first = await publisher.publish(request(account, credentials, [lost]), hooks);
    if (harness.loseNextAnswer !== undefined) expect(first).toMatchObject({ kind: 'failed', retryable: true, mayHaveCommitted: true });
    const retried = await retryInDoubt(publisher, request(account, credentials, [{ ...lost, progress: engine.progress.get(0) ?? null }], true), hooks);
    expect(retried.kind).toBe('published');
    expect(await harness.posts(account, credentials, 'answer lost')).toBe(1);
  });

  if (harness.slowMedia !== undefined) {
    const slowMedia = harness.slowMedia.bind(harness);
    it('answers pending while the platform processes, and a restarted worker resumes without sending twice', async () => {
      const { account, credentials } = await harness.account();
      const slow = slowMedia();
      const engine = road(credentials);
      const before = harness.publisher();
      const material = part(before, 'after processing', [slow.media]);
      expect(await before.publish(request(account, credentials, [material]), engine.hooks({ version: 0 }))).toMatchObject({ kind: 'pending' });
      expect(engine.progress.get(0)).toEqual(expect.any(String));
      slow.finish();
      const after = harness.publisher();
      const resumed = await after.publish(
        request(account, credentials, [{ ...material, progress: engine.progress.get(0) ?? null }]),
        engine.hooks({ version: 0 }),
      );
      expect(resumed.kind).toBe('published');
      expect(await harness.posts(account, credentials, 'after processing')).toBe(1);
    });
  }

  if (harness.expire !== undefined && harness.refreshes !== undefined) {
    const expire = harness.expire.bind(harness);
    const refreshes = harness.refreshes.bind(harness);
    it('ends a refresh race with one refresh and one valid token', async () => {
      const publisher = harness.publisher();
      const { account, credentials } = await harness.account();
      const stale = expire(credentials);
      const engine = road(stale);
      const before = refreshes();
      const outcomes = await Promise.all(
        ['race one', 'race two'].map((text) =>
          publisher.publish(request(account, stale, [part(publisher, text, harness.requiredMedia?.())]), engine.hooks({ version: 0 })),
        ),
      );
      expect(outcomes.map((o) => o.kind)).toEqual(['published', 'published']);
      expect(refreshes() - before).toBe(1);
      const next = await publisher.publish(
        request(account, engine.stored().credentials, [part(publisher, 'with the stored token', harness.requiredMedia?.())]),
        engine.hooks(engine.stored()),
      );
      expect(next.kind).toBe('published');
      expect(refreshes() - before).toBe(1);
    });
  }
});
