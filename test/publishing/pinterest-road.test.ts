import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApi, type Schemas } from '../support/api.js';
import { connectThroughConsent } from '../support/consent.js';
import { userWithKey, type TestUser } from '../support/fixtures.js';
import { makeMediaFiles, type MediaFiles } from '../support/media-files.js';
import { startPinterestFake, type PinterestFake, type PinterestUser } from '../support/pinterest-fake.js';
import { postDetail, publishNow, uploadMedia } from '../support/posts.js';

// The whole road to Pinterest: connect through its consent page, pin with the worker, and assert
// what Pinterest (a fake written from API v5's documentation, fetching images from Herald over HTTP) holds.
let pi: PinterestFake;
let files: MediaFiles;

beforeAll(async () => {
  pi = await startPinterestFake();
  files = makeMediaFiles();
});
const api = useTestApi({
  listen: true,
  env: () => ({ HERALD_PINTEREST_CLIENT_ID: pi.clientId, HERALD_PINTEREST_CLIENT_SECRET: pi.clientSecret, HERALD_PINTEREST_BASE_URL: pi.url }),
});
afterAll(async () => {
  await pi?.close();
  files?.cleanup();
});

async function connectPinterest(u: TestUser, username: string): Promise<{ account: Schemas['Account']; user: PinterestUser; boardId: string }> {
  const user = pi.addUser({ username });
  const board = pi.addBoard(user, { name: 'Ideas' });
  pi.consentAs(user);
  const { connection, accounts } = await connectThroughConsent(api, u, { platform: 'pinterest' });
  const [account] = accounts;
  if (account === undefined) throw new Error(`not connected: ${JSON.stringify(connection)}`);
  return { account, user, boardId: board.id };
}

const pinsOf = (user: PinterestUser) => pi.pins.filter((p) => p.userId === user.id);
const onBoard = (accountId: string, boardId: string, more: Record<string, unknown> = {}) => [{ accountId, fields: { boardId, ...more } }];

describe('connecting a Pinterest account', () => {
  it('goes through the consent page with comma-separated scopes and keeps the rotating tokens sealed', async () => {
    const u = await userWithKey(api.db);
    const user = pi.addUser({ username: 'ada_pins' });
    pi.consentAs(user);
    const { connection, accounts } = await connectThroughConsent(api, u, { platform: 'pinterest' });
    expect(connection).toMatchObject({ platform: 'pinterest', status: 'connected', error: null });
    expect(accounts).toEqual([expect.objectContaining({ platform: 'pinterest', username: 'ada_pins', mode: 'live', health: 'ok' })]);
    expect(pi.authorizations.at(-1)?.query).toMatchObject({
      response_type: 'code',
      client_id: pi.clientId,
      scope: 'boards:read,boards:write,pins:read,pins:write,user_accounts:read',
    });
    const row = await api.db
      .selectFrom('accounts')
      .select(['platform_user_id', 'credentials'])
      .where('id', '=', connection.accountId ?? '')
      .executeTakeFirstOrThrow();
    expect(row.platform_user_id).toBe(user.id);
    expect(row.credentials).toMatch(/^v1\./);
  });
});

describe('pinning to Pinterest', () => {
  it('pins an image Pinterest fetches from Herald, on the board, with title, link, description and alt text', async () => {
    const u = await userWithKey(api.db);
    const { account, user, boardId } = await connectPinterest(u, 'bo_pins');
    const image = await uploadMedia(api, u, files.jpeg1080x1350, 'a.jpg', 'image/jpeg', 'A red rectangle');
    const id = await publishNow(api, u, {
      accountIds: [account.id],
      caption: 'Red, for the kitchen',
      mediaIds: [image],
      accountOverrides: onBoard(account.id, boardId, { title: 'Red', link: 'https://shop.example.com/red' }),
    });
    await api.publishing.drain();
    const [pin, ...more] = pinsOf(user);
    expect(more).toEqual([]);
    expect(pin).toMatchObject({
      boardId,
      mediaType: 'image',
      title: 'Red',
      description: 'Red, for the kitchen',
      link: 'https://shop.example.com/red',
      altText: 'A red rectangle',
    });
    expect(pi.fetches.find((f) => f.url === pin?.imageUrls[0])).toMatchObject({ contentType: 'image/jpeg', bytes: files.jpeg1080x1350.length });
    expect(await postDetail(api, u, id)).toMatchObject({
      status: 'published',
      targets: [{ status: 'published', platformPostId: pin?.id, url: `https://www.pinterest.com/pin/${pin?.id}/` }],
    });
  });

  it('uploads a video to the URL Pinterest gives, waits while it processes, then pins it', async () => {
    const u = await userWithKey(api.db);
    const { account, user, boardId } = await connectPinterest(u, 'cy_pins');
    const video = await uploadMedia(api, u, files.mp4Noise4s, 'v.mp4', 'video/mp4', 'Noise');
    pi.videoPolls = 2;
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Moving', mediaIds: [video], accountOverrides: onBoard(account.id, boardId) });
    await api.publishing.drain();
    const [pin] = pinsOf(user);
    expect(pin).toMatchObject({ mediaType: 'video', description: 'Moving' });
    expect(pi.media.get(pin?.mediaId ?? '')?.bytes).toEqual(files.mp4Noise4s);
    expect(await postDetail(api, u, id)).toMatchObject({ status: 'published', targets: [{ platformPostId: pin?.id }] });
  });

  it('pins once when the worker loses the answer: the board is read and the pin recorded', async () => {
    const u = await userWithKey(api.db);
    const { account, user, boardId } = await connectPinterest(u, 'dee_pins');
    const image = await uploadMedia(api, u, files.jpeg1080x1350, 'a.jpg', 'image/jpeg', 'Red');
    pi.fail('pins', { kind: 'commitThenDrop' });
    const calls = pi.pinCalls();
    const id = await publishNow(api, u, {
      accountIds: [account.id],
      caption: 'Exactly one pin',
      mediaIds: [image],
      accountOverrides: onBoard(account.id, boardId),
    });
    await api.publishing.drain();
    await api.publishing.drainAhead(10 * 60_000);
    const [only, ...more] = pinsOf(user);
    expect(more).toEqual([]);
    expect(pi.pinCalls() - calls).toBe(1);
    expect(await postDetail(api, u, id)).toMatchObject({ status: 'published', targets: [{ status: 'published', platformPostId: only?.id }] });
  });

  it("says the operator's app has only Trial access when Pinterest refuses with code 29, not retrying", async () => {
    const u = await userWithKey(api.db);
    const { account, user, boardId } = await connectPinterest(u, 'eve_pins');
    const image = await uploadMedia(api, u, files.jpeg1080x1350, 'a.jpg', 'image/jpeg', 'Red');
    pi.trialMode = true;
    try {
      const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Trial', mediaIds: [image], accountOverrides: onBoard(account.id, boardId) });
      await api.publishing.drain();
      const target = (await postDetail(api, u, id)).targets[0];
      expect(target).toMatchObject({ status: 'failed', error: { category: 'system_error', retrying: false } });
      expect(target?.error?.message).toMatch(/^Pinterest has not granted the operator's app standard access/);
      expect(pinsOf(user)).toEqual([]);
    } finally {
      pi.trialMode = false;
    }
  });

  it('refuses at create, storing nothing, a post that names no board for a live Pinterest account', async () => {
    const u = await userWithKey(api.db);
    const { account } = await connectPinterest(u, 'fay_pins');
    const image = await uploadMedia(api, u, files.jpeg1080x1350, 'a.jpg', 'image/jpeg', 'Red');
    for (const [overrides, path] of [
      [undefined, ['accountOverrides']],
      [[{ accountId: account.id, fields: { title: 'No board' } }], ['accountOverrides', 0, 'fields', 'boardId']],
    ] as const) {
      const res = await api.request<Schemas['Error']>({
        method: 'POST',
        url: '/api/v1/posts',
        key: u.key,
        body: { accountIds: [account.id], caption: 'Nowhere', mediaIds: [image], ...(overrides === undefined ? {} : { accountOverrides: overrides }) },
      });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        error: 'Invalid request',
        details: [
          {
            code: 'invalid_type',
            path,
            message: `A live Pinterest account (${account.id}) needs fields.boardId in its accountOverrides entry: the board to pin to`,
          },
        ],
      });
    }
    expect((await api.request<Schemas['PostList']>({ method: 'GET', url: '/api/v1/posts', key: u.key })).body.data).toEqual([]);
  });

  it('refreshes an expired access token once, storing the rotated pair, and pins with it', async () => {
    const u = await userWithKey(api.db);
    const { account, user, boardId } = await connectPinterest(u, 'gus_pins');
    const image = await uploadMedia(api, u, files.jpeg1080x1350, 'a.jpg', 'image/jpeg', 'Red');
    const before = pi.refreshes();
    pi.expireAccessTokens();
    const id = await publishNow(api, u, {
      accountIds: [account.id],
      caption: 'After a refresh',
      mediaIds: [image],
      accountOverrides: onBoard(account.id, boardId),
    });
    await api.publishing.drain();
    expect(pi.refreshes() - before).toBe(1);
    expect(pinsOf(user)).toHaveLength(1);
    expect((await postDetail(api, u, id)).targets[0]?.status).toBe('published');
  });

  it('waits when Pinterest answers 429, pinning nothing', async () => {
    const u = await userWithKey(api.db);
    const { account, user, boardId } = await connectPinterest(u, 'hal_pins');
    const image = await uploadMedia(api, u, files.jpeg1080x1350, 'a.jpg', 'image/jpeg', 'Red');
    pi.fail('pins', { kind: 'answer', status: 429 });
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Later', mediaIds: [image], accountOverrides: onBoard(account.id, boardId) });
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).targets[0]).toMatchObject({ status: 'failed', error: { category: 'rate_limited', retrying: true } });
    expect(pinsOf(user)).toEqual([]);
  });
});
