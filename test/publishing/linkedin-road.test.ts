import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApi, type Schemas } from '../support/api.js';
import { consentInBrowser } from '../support/consent.js';
import { userWithKey, type TestUser } from '../support/fixtures.js';
import { startLinkedInFake, type LinkedInFake, type LinkedInMember } from '../support/linkedin-fake.js';
import { makeMediaFiles, type MediaFiles } from '../support/media-files.js';
import { postDetail, publishNow, uploadMedia } from '../support/posts.js';
import { expectEventMatchesSpec } from '../support/contract.js';
import { startTestReceiver } from '../support/webhook-receiver.js';

// The whole road to LinkedIn: connect through the consent flow, publish with the worker, and
// assert what LinkedIn (a fake written from its documentation) received and shows.
let linkedin: LinkedInFake;
let files: MediaFiles;
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

beforeAll(async () => {
  // Small video parts, so that a test video is uploaded in several.
  linkedin = await startLinkedInFake({ videoPartBytes: 8 * 1024 });
  files = makeMediaFiles();
});
const api = useTestApi({
  env: () => ({ HERALD_LINKEDIN_CLIENT_ID: linkedin.clientId, HERALD_LINKEDIN_CLIENT_SECRET: linkedin.clientSecret, HERALD_LINKEDIN_BASE_URL: linkedin.url }),
});
afterAll(async () => {
  await linkedin?.close();
  files?.cleanup();
});

type Connection = Schemas['Connection'];

async function connectLinkedIn(u: TestUser, name: string): Promise<{ account: Schemas['Account']; member: LinkedInMember; connection: Connection }> {
  const member = linkedin.addMember({ name });
  linkedin.consentAs(member);
  const started = await api.request<Connection>({ method: 'POST', url: '/api/v1/connections', key: u.key, body: { platform: 'linkedin' } });
  expect(started.status).toBe(201);
  expect((await consentInBrowser(api, started.body.authorizationUrl ?? '')).callback.status).toBe(200);
  const connection = (await api.request<Connection>({ method: 'GET', url: `/api/v1/connections/${started.body.id}`, key: u.key })).body;
  const accounts = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key });
  const account = accounts.body.data.find((a) => a.id === connection.accountId);
  if (account === undefined) throw new Error(`not connected: ${JSON.stringify(connection)}`);
  return { account, member, connection };
}

const postsOf = (member: LinkedInMember) => linkedin.posts.filter((p) => p.author === member.urn);

describe('connecting a LinkedIn member through the consent page', () => {
  it('asks for the self-serve scopes without PKCE, and connects the member LinkedIn names', async () => {
    const u = await userWithKey(api.db);
    const { account, member, connection } = await connectLinkedIn(u, 'Grace Hopper');
    expect(connection).toMatchObject({ platform: 'linkedin', status: 'connected', error: null });
    expect(account).toMatchObject({ platform: 'linkedin', username: 'Grace Hopper', displayName: 'Grace Hopper', mode: 'live', health: 'ok' });
    expect(linkedin.authorizations.at(-1)).toMatchObject({
      clientId: linkedin.clientId,
      redirectUri: 'http://127.0.0.1:3000/oauth/callback',
      scope: 'openid profile email w_member_social',
      outcome: 'code',
    });
    const consentRequest = linkedin.requests.filter((r) => r.path.startsWith('/oauth/v2/authorization')).at(-1);
    expect(consentRequest?.path).not.toContain('code_challenge');
    expect((await api.db.selectFrom('accounts').select('platform_user_id').where('id', '=', account.id).executeTakeFirstOrThrow()).platform_user_id).toBe(
      member.sub,
    );
  });
});

describe("a LinkedIn token's 60 days", () => {
  it('shows the account expiring a week before the token ends, and needing a reconnect once it has, telling a webhook of each once', async () => {
    const receiver = await startTestReceiver();
    try {
      const u = await userWithKey(api.db);
      const hook = await api.request({
        method: 'POST',
        url: '/api/v1/webhooks',
        key: u.key,
        body: { url: receiver.url, eventTypes: ['account.expiring', 'account.needs_reconnect'] },
      });
      expect(hook.status).toBe(201);
      const { account } = await connectLinkedIn(u, 'Radia Perlman');
      const endsOn = new Date(Date.now() + 60 * DAY).toISOString().slice(0, 10);
      const health = async () =>
        (await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key })).body.data.find((a) => a.id === account.id);
      const houseAt = async (ms: number) => {
        api.publishing.runAhead(ms);
        try {
          expect(await api.publishing.keepHouse()).toBe(true);
        } finally {
          api.publishing.runAhead(0);
        }
      };

      await houseAt(50 * DAY);
      expect(await health()).toMatchObject({ health: 'ok', healthMessage: null });
      await houseAt(54 * DAY);
      expect(await health()).toMatchObject({
        health: 'expiring',
        healthMessage: `The LinkedIn access token ends on ${endsOn}; connect the account again before then`,
      });
      await houseAt(55 * DAY);
      await houseAt(61 * DAY);
      expect(await health()).toMatchObject({
        health: 'needs_reconnect',
        healthMessage: `The LinkedIn access token ended on ${endsOn}; connect the account again`,
      });
      // The events were recorded by the workers' clock, 61 days ahead: delivered by it.
      api.publishing.runAhead(61 * DAY);
      try {
        await api.publishing.deliverAll();
      } finally {
        api.publishing.runAhead(0);
      }
      const events = receiver.received.map((r) => r.json as { type: string; data: Schemas['Account'] });
      expect(events.map((e) => [e.type, e.data.health])).toEqual([
        ['account.expiring', 'expiring'],
        ['account.needs_reconnect', 'needs_reconnect'],
      ]);
      for (const r of receiver.received) expectEventMatchesSpec(r.json);
    } finally {
      await receiver.close();
    }
  });
});

describe('publishing to LinkedIn', () => {
  it('posts two images with their alt texts as a multiImage post, the commentary escaped, and the first comment on it', async () => {
    const u = await userWithKey(api.db);
    const { account, member } = await connectLinkedIn(u, 'Ada Byron');
    const first = await uploadMedia(api, u, files.png64, 'a.png', 'image/png', 'A blue square');
    const second = await uploadMedia(api, u, files.jpeg1080x1350, 'b.jpg', 'image/jpeg', 'A red rectangle');
    const caption = 'Launch day (finally) #herald: 50% off_for [members] @ home <3 ~ *bold* {x} | \\done';
    const id = await publishNow(api, u, { accountIds: [account.id], caption, mediaIds: [first, second], firstComment: 'Details in the (first) comment' });
    await api.publishing.drain();
    const [post] = postsOf(member);
    // LinkedIn shows the whole text: nothing was cut at a reserved character.
    expect(post?.commentary).toBe(caption);
    const images = (post?.content as { multiImage?: { images: { id: string; altText: string }[] } }).multiImage?.images ?? [];
    expect(images.map((i) => i.altText)).toEqual(['A blue square', 'A red rectangle']);
    expect(images.map((i) => [...linkedin.images.values()].find((image) => image.urn === i.id)?.bytes)).toEqual([files.png64, files.jpeg1080x1350]);
    expect(linkedin.comments.filter((c) => c.object === post?.urn).map((c) => c.text)).toEqual(['Details in the (first) comment']);
    expect((await postDetail(api, u, id)).targets[0]).toMatchObject({
      status: 'published',
      platformPostId: post?.urn,
      url: `https://www.linkedin.com/feed/update/${post?.urn}/`,
    });
    for (const request of linkedin.requests.filter((r) => r.path.startsWith('/rest/'))) expect(request.headers['linkedin-version']).toBe('202610');
  });

  it('uploads a video in the parts LinkedIn asks for, with their ETags in order, and posts it once available', async () => {
    const u = await userWithKey(api.db);
    const { account, member } = await connectLinkedIn(u, 'Edith Clarke');
    const video = await uploadMedia(api, u, files.mp4Noise4s, 'v.mp4', 'video/mp4', 'Noise');
    linkedin.videoProcessing.polls = 1;
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'A video', mediaIds: [video] });
    await api.publishing.drain();
    const [post] = postsOf(member);
    const urn = (post?.content as { media?: { id: string } }).media?.id;
    const uploaded = [...linkedin.videos.values()].find((v) => v.urn === urn);
    expect(uploaded?.status).toBe('AVAILABLE');
    expect(uploaded?.parts.length).toBeGreaterThan(1);
    expect(Buffer.concat(uploaded?.parts.map((p) => p.bytes ?? Buffer.alloc(0)) ?? [])).toEqual(files.mp4Noise4s);
    expect((await postDetail(api, u, id)).status).toBe('published');
  });

  it('sends an in-doubt post again byte for byte and takes the URN LinkedIn names as the duplicate: one post', async () => {
    const u = await userWithKey(api.db);
    const { account, member } = await connectLinkedIn(u, 'Hedy Lamarr');
    const image = await uploadMedia(api, u, files.png64, 'a.png', 'image/png', 'Once');
    linkedin.fail('posts', { kind: 'commitThenDrop' });
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Only once on LinkedIn', mediaIds: [image] });
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).targets[0]?.error).toMatchObject({ category: 'platform_error', retrying: true });
    await api.publishing.drainAhead(2 * MINUTE);
    expect(postsOf(member)).toHaveLength(1);
    expect([...linkedin.images.values()].filter((i) => i.owner === member.urn)).toHaveLength(1);
    expect((await postDetail(api, u, id)).targets[0]).toMatchObject({ status: 'published', platformPostId: postsOf(member)[0]?.urn });
  });

  it('tells the operator to raise HERALD_LINKEDIN_VERSION when LinkedIn no longer serves it', async () => {
    const u = await userWithKey(api.db);
    const { account } = await connectLinkedIn(u, 'Mary Somerville');
    linkedin.fail('posts', {
      kind: 'answer',
      status: 426,
      body: { status: 426, code: 'NONEXISTENT_VERSION', message: 'Requested version 202610 is not active' },
    });
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Too old' });
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).targets[0]).toMatchObject({
      status: 'failed',
      error: {
        category: 'system_error',
        retrying: false,
        message: 'LinkedIn no longer serves API version 202610; the operator must set HERALD_LINKEDIN_VERSION to a current one (YYYYMM)',
      },
    });
  });

  it('asks for a new consent when the 60-day token has ended, calling nothing', async () => {
    const u = await userWithKey(api.db);
    const { account, member } = await connectLinkedIn(u, 'Ida Rhodes');
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'After sixty days' });
    api.publishing.runAhead(61 * 24 * 60 * MINUTE);
    const before = linkedin.requests.length;
    try {
      await api.publishing.drain();
    } finally {
      api.publishing.runAhead(0);
    }
    expect((await postDetail(api, u, id)).targets[0]).toMatchObject({
      status: 'failed',
      error: {
        category: 'auth_expired',
        message: expect.stringMatching(/^LinkedIn's access token for this account ended on \d{4}-\d{2}-\d{2}; connect the account again$/) as unknown,
      },
    });
    expect(linkedin.requests.length).toBe(before);
    expect(postsOf(member)).toEqual([]);
    const accounts = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key });
    expect(accounts.body.data).toEqual([expect.objectContaining({ id: account.id, health: 'needs_reconnect' })]);
  });
});
