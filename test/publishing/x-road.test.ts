import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { ServiceState } from '../../src/api/service-state.js';
import { injectChecked, UNLIMITED, useTestApi, type Schemas } from '../support/api.js';
import { userWithKey, type TestUser } from '../support/fixtures.js';
import { makeMediaFiles, type MediaFiles } from '../support/media-files.js';
import { postDetail, publishNow, uploadMedia } from '../support/posts.js';
import { atCallback, atPlatform, consentInBrowser, openConsentLink } from '../support/consent.js';
import { noteSecret, runLogger } from '../support/run-log.js';
import { startXFake, type XFake, type XUser } from '../support/x-fake.js';
import { expectEventMatchesSpec } from '../support/contract.js';
import { startTestReceiver, verifiedWith } from '../support/webhook-receiver.js';

// The whole road to X: connect through the consent flow, publish with the worker, and assert what
// X (a fake written from its documentation) received and holds.
let x: XFake;
let files: MediaFiles;
const MINUTE = 60_000;

beforeAll(async () => {
  x = await startXFake();
  files = makeMediaFiles();
});
const api = useTestApi({
  env: () => ({
    HERALD_X_CLIENT_ID: x.clientId,
    HERALD_X_CLIENT_SECRET: x.clientSecret,
    HERALD_X_BASE_URL: x.url,
    HERALD_RETURN_URL_ORIGINS: 'https://app.example.com, http://localhost:8080',
  }),
});
afterAll(async () => {
  await x?.close();
  files?.cleanup();
});

type Connection = Schemas['Connection'];

async function start(u: TestUser, body: Record<string, unknown>): Promise<Connection> {
  const res = await api.request<Connection>({ method: 'POST', url: '/api/v1/connections', key: u.key, body });
  expect(res.status).toBe(201);
  return res.body;
}

/** The person's browser: Herald's consent link, X's consent page, then back to Herald's callback; Herald's answer. */
async function consent(connection: Connection) {
  const { back, callback } = await consentInBrowser(api, connection.authorizationUrl ?? '');
  expect(back.pathname).toBe('/oauth/callback');
  return callback;
}

async function connectX(u: TestUser, username: string): Promise<{ account: Schemas['Account']; user: XUser }> {
  const user = x.addUser({ username, name: `${username} on X` });
  x.consentAs(user);
  const connection = await start(u, { platform: 'x' });
  expect((await consent(connection)).status).toBe(200);
  const done = await api.request<Connection>({ method: 'GET', url: `/api/v1/connections/${connection.id}`, key: u.key });
  expect(done.body).toMatchObject({ status: 'connected', error: null });
  const accounts = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key });
  const account = accounts.body.data.find((a) => a.id === done.body.accountId);
  if (account === undefined) throw new Error('the connected account is not listed');
  return { account, user };
}

const postsOf = (user: XUser) => x.posts.filter((p) => p.authorId === user.id);
const tweetCalls = (text: string) => x.requests.filter((r) => r.method === 'POST' && r.path === '/2/tweets' && (r.body as { text?: string }).text === text);

describe('connecting an X account through its consent page', () => {
  it("sends the person to X with PKCE S256, then connects the account X vouches for and sends them back to the client's page", async () => {
    const u = await userWithKey(api.db);
    const user = x.addUser({ username: 'ada', name: 'Ada Lovelace' });
    x.consentAs(user);
    const connection = await start(u, { platform: 'x', returnUrl: 'https://app.example.com/connected?from=herald' });
    expect(connection).toMatchObject({ platform: 'x', status: 'pending', accountId: null, error: null });
    expect(Date.parse(connection.expiresAt) - Date.now()).toBeGreaterThan(9 * MINUTE);
    expect(connection.authorizationUrl).toMatch(/^http:\/\/127\.0\.0\.1:3000\/oauth\/start\/[A-Za-z0-9_-]{43}$/);
    const { cookie, consentUrl: consentAt } = await openConsentLink(api, connection.authorizationUrl ?? '');
    const consentUrl = new URL(consentAt);
    expect(`${consentUrl.origin}${consentUrl.pathname}`).toBe(`${x.url}/i/oauth2/authorize`);
    expect(Object.fromEntries(consentUrl.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: x.clientId,
      redirect_uri: 'http://127.0.0.1:3000/oauth/callback',
      scope: 'tweet.read tweet.write users.read media.write offline.access',
      code_challenge_method: 'S256',
    });

    const back = await atCallback(api, await atPlatform(consentAt), cookie);
    expect(back.status).toBe(302);
    const location = new URL(String(back.headers.location));
    expect(`${location.origin}${location.pathname}`).toBe('https://app.example.com/connected');
    expect(Object.fromEntries(location.searchParams)).toEqual({ from: 'herald', connection: connection.id, status: 'connected' });

    const done = await api.request<Connection>({ method: 'GET', url: `/api/v1/connections/${connection.id}`, key: u.key });
    expect(done.body).toMatchObject({ status: 'connected', authorizationUrl: null, error: null, accountId: expect.stringMatching(/^acc_/) as unknown });
    const accounts = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key });
    expect(accounts.body.data).toEqual([
      { id: done.body.accountId, platform: 'x', username: 'ada', displayName: 'Ada Lovelace', mode: 'live', health: 'ok', healthMessage: null },
    ]);
    // The tokens are sealed at rest; the verifier and state are gone with the connection.
    const row = await api.db
      .selectFrom('accounts')
      .select(['credentials', 'platform_user_id'])
      .where('id', '=', done.body.accountId ?? '')
      .executeTakeFirstOrThrow();
    expect(row.platform_user_id).toBe(user.id);
    expect(row.credentials).toMatch(/^v1\./);
    expect(await api.db.selectFrom('connections').select(['state_hash', 'code_verifier']).where('id', '=', connection.id).executeTakeFirstOrThrow()).toEqual({
      state_hash: null,
      code_verifier: null,
    });
  });

  it('tells a webhook subscribed to account.connected, with the account as listAccounts shows it', async () => {
    const receiver = await startTestReceiver();
    try {
      const u = await userWithKey(api.db);
      const hook = await api.request<Schemas['WebhookWithSecret']>({
        method: 'POST',
        url: '/api/v1/webhooks',
        key: u.key,
        body: { url: receiver.url, eventTypes: ['account.connected'] },
      });
      expect(hook.status).toBe(201);
      const { account } = await connectX(u, 'ace');
      await api.publishing.deliverAll();
      expect(receiver.received).toHaveLength(1);
      const [event] = receiver.received;
      if (event === undefined) throw new Error('no event');
      expect(verifiedWith(event, hook.body.secret)).toBe(true);
      expectEventMatchesSpec(event.json);
      expect(event.json).toMatchObject({ type: 'account.connected', data: account });
    } finally {
      await receiver.close();
    }
  });

  it('reconnects an account the user already has in place: same id, healthy again', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectX(u, 'bo');
    await api.db
      .updateTable('accounts')
      .set({ health: 'needs_reconnect', health_message: 'X refused the access token' })
      .where('id', '=', account.id)
      .execute();
    x.consentAs(user);
    const again = await start(u, { platform: 'x' });
    expect((await consent(again)).status).toBe(200);
    const done = await api.request<Connection>({ method: 'GET', url: `/api/v1/connections/${again.id}`, key: u.key });
    expect(done.body.accountId).toBe(account.id);
    const accounts = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key });
    expect(accounts.body.data).toEqual([expect.objectContaining({ id: account.id, health: 'ok', healthMessage: null })]);
  });

  it('ends the connection failed when the person refuses, and sends them back saying so', async () => {
    const u = await userWithKey(api.db);
    x.refuseNextConsent();
    const connection = await start(u, { platform: 'x', returnUrl: 'https://app.example.com/back' });
    const back = await consent(connection);
    expect(back.status).toBe(302);
    expect(new URL(String(back.headers.location)).searchParams.get('status')).toBe('failed');
    const done = await api.request<Connection>({ method: 'GET', url: `/api/v1/connections/${connection.id}`, key: u.key });
    expect(done.body).toMatchObject({ status: 'failed', accountId: null, error: 'The person did not allow access on X (access_denied)' });
    expect((await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key })).body.data).toEqual([]);
  });

  it('answers a used or unknown state with a static page and changes nothing; a connection past its 10 minutes ends expired', async () => {
    const u = await userWithKey(api.db);
    const user = x.addUser({ username: 'cy' });
    x.consentAs(user);
    const connection = await start(u, { platform: 'x' });
    const { cookie, consentUrl } = await openConsentLink(api, connection.authorizationUrl ?? '');
    const callback = await atPlatform(consentUrl);
    expect((await atCallback(api, callback, cookie)).status).toBe(200);
    const replay = await atCallback(api, callback, cookie);
    expect(replay.status).toBe(400);
    expect(replay.headers['content-type']).toMatch(/^text\/html/);
    expect(replay.body).toContain('This sign-in link is unknown or has already been used');
    expect(replay.body).not.toContain(callback.searchParams.get('state'));
    expect((await api.request<Connection>({ method: 'GET', url: `/api/v1/connections/${connection.id}`, key: u.key })).body.status).toBe('connected');
    expect((await api.request({ method: 'GET', url: '/oauth/callback?state=made-up&code=abc' })).status).toBe(400);
    expect((await api.request({ method: 'GET', url: '/oauth/callback' })).status).toBe(400);

    const late = await start(u, { platform: 'x' });
    const lateBrowser = await openConsentLink(api, late.authorizationUrl ?? '');
    await api.db
      .updateTable('connections')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', late.id)
      .execute();
    expect((await api.request<Connection>({ method: 'GET', url: `/api/v1/connections/${late.id}`, key: u.key })).body).toMatchObject({
      status: 'expired',
      authorizationUrl: null,
      error: null,
    });
    const lateBack = await atCallback(api, await atPlatform(lateBrowser.consentUrl), lateBrowser.cookie);
    expect(lateBack.status).toBe(200);
    expect(lateBack.body).toContain('The account was not connected');
    expect((await api.request<Connection>({ method: 'GET', url: `/api/v1/connections/${late.id}`, key: u.key })).body).toMatchObject({
      status: 'expired',
      accountId: null,
    });
  });

  it('refuses a bad returnUrl, a platform that connects with credentials and one this server has no app for, storing nothing', async () => {
    const u = await userWithKey(api.db);
    const count = async () =>
      (
        await api.db
          .selectFrom('connections')
          .select(({ fn }) => fn.countAll<string>().as('n'))
          .where('user_id', '=', u.userId)
          .executeTakeFirstOrThrow()
      ).n;
    for (const returnUrl of ['javascript:alert(1)', 'data:text/html,hi', '/relative/path', 'ftp://example.com/']) {
      const bad = await api.request<{ error: string; details: unknown[] }>({
        method: 'POST',
        url: '/api/v1/connections',
        key: u.key,
        body: { platform: 'x', returnUrl },
      });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({
        error: 'Invalid request',
        details: [{ path: ['returnUrl'], received: returnUrl, message: 'returnUrl must be an absolute http or https URL' }],
      });
    }
    expect(await api.request({ method: 'POST', url: '/api/v1/connections', key: u.key, body: { platform: 'bluesky' } })).toMatchObject({
      status: 400,
      body: { error: 'bluesky connects with credentials: use POST /api/v1/accounts' },
    });
    expect(await api.request({ method: 'POST', url: '/api/v1/connections', key: u.key, body: { platform: 'reddit' } })).toMatchObject({
      status: 400,
      body: { error: 'Platform not configured: set HERALD_REDDIT_CLIENT_ID and HERALD_REDDIT_CLIENT_SECRET on the server' },
    });
    const unconfigured = new ServiceState();
    unconfigured.attach({ ...api.publishing.serviceDeps, oauth: {} });
    const app = await buildApp({ context: unconfigured, rateLimits: { limits: UNLIMITED }, loggerInstance: runLogger() });
    try {
      expect(await injectChecked(app, { method: 'POST', url: '/api/v1/connections', key: u.key, body: { platform: 'x' } })).toMatchObject({
        status: 400,
        body: { error: 'Platform not configured: set HERALD_X_CLIENT_ID and HERALD_X_CLIENT_SECRET on the server' },
      });
      const platforms = await injectChecked<Schemas['PlatformList']>(app, { method: 'GET', url: '/api/v1/platforms', key: u.key });
      expect(platforms.body.data.find((p) => p.id === 'x')).toMatchObject({ connect: 'oauth', configured: false });
    } finally {
      await app.close();
    }
    expect(await count()).toBe('0');
    const platforms = await api.request<Schemas['PlatformList']>({ method: 'GET', url: '/api/v1/platforms', key: u.key });
    expect(Object.fromEntries(platforms.body.data.map((p) => [p.id, [p.connect, p.configured]]))).toMatchObject({
      x: ['oauth', true],
      bluesky: ['credentials', true],
      mastodon: ['credentials', true],
      instagram: ['oauth', false],
      reddit: ['oauth', false],
    });
  });

  it('shows a connection only to the user who started it', async () => {
    const u = await userWithKey(api.db);
    const other = await userWithKey(api.db);
    const connection = await start(u, { platform: 'x' });
    expect(await api.request({ method: 'GET', url: `/api/v1/connections/${connection.id}`, key: other.key })).toMatchObject({
      status: 404,
      body: { error: 'Connection not found' },
    });
    expect(await api.request({ method: 'GET', url: '/api/v1/connections/conn_nope', key: u.key })).toMatchObject({
      status: 404,
      body: { error: 'Connection not found' },
    });
  });

  it("completes only in the browser that opened the consent link: a person sent X's consent page by someone else connects nothing (RFC 9700 §4.7)", async () => {
    const tenant = await userWithKey(api.db);
    const victim = x.addUser({ username: 'victim' });
    x.consentAs(victim);
    const connection = await start(tenant, { platform: 'x' });
    const exchanges = () => x.requests.filter((r) => r.path === '/2/oauth2/token').length;
    const exchangesBefore = exchanges();
    // The tenant opens its own link, and passes the consent page it was sent to on to the victim.
    const tenantBrowser = await openConsentLink(api, connection.authorizationUrl ?? '');
    const victimBack = await atPlatform(tenantBrowser.consentUrl);
    const refused = await atCallback(api, victimBack, undefined);
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('This sign-in was not started in this browser, so no account was connected');
    // A cookie of another connection (the victim's own Herald flow, or a guess) does not do either.
    expect((await atCallback(api, victimBack, `herald_consent_${connection.id}=guessed-${'a'.repeat(36)}`)).status).toBe(403);
    expect((await api.request<Connection>({ method: 'GET', url: `/api/v1/connections/${connection.id}`, key: tenant.key })).body).toMatchObject({
      status: 'pending',
      accountId: null,
    });
    expect((await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: tenant.key })).body.data).toEqual([]);
    expect(exchanges()).toBe(exchangesBefore);

    // The link opens once: a second browser gets no binding and is not sent to X.
    const second = await api.request<string>({ method: 'GET', url: new URL(connection.authorizationUrl ?? '').pathname });
    expect(second.status).toBe(400);
    expect(second.headers['set-cookie']).toBeUndefined();
    expect(second.body).toContain('has already been opened');
  });

  it('keeps neither the state nor the consent link in clear, and binds with a cookie that scripts cannot read', async () => {
    const u = await userWithKey(api.db);
    const connection = await start(u, { platform: 'x' });
    const token = new URL(connection.authorizationUrl ?? '').pathname.split('/').at(-1) ?? '';
    const opened = await api.request({ method: 'GET', url: new URL(connection.authorizationUrl ?? '').pathname });
    const state = new URL(String(opened.headers.location)).searchParams.get('state') ?? '';
    noteSecret(state);
    expect(state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(String(opened.headers['set-cookie'])).toMatch(
      new RegExp(`^herald_consent_${connection.id}=[A-Za-z0-9_-]{43}; Path=/oauth/callback; Max-Age=(600|599); HttpOnly; SameSite=Lax$`),
    );
    const row = JSON.stringify(await api.db.selectFrom('connections').selectAll().where('id', '=', connection.id).executeTakeFirstOrThrow());
    expect(row).not.toContain(state);
    expect(row).not.toContain(token);
    expect(row).not.toContain('oauth2/authorize');
  });

  it('completes nothing on a HEAD of the callback or of the consent link (a link checker): only GET takes them', async () => {
    const u = await userWithKey(api.db);
    x.consentAs(x.addUser({ username: 'headless' }));
    const connection = await start(u, { platform: 'x' });
    const link = new URL(connection.authorizationUrl ?? '').pathname;
    const headLink = await api.app.inject({ method: 'HEAD', url: link });
    expect([headLink.statusCode, headLink.headers['set-cookie'], headLink.headers.location]).toEqual([200, undefined, undefined]);
    const { cookie, consentUrl } = await openConsentLink(api, connection.authorizationUrl ?? '');
    const back = await atPlatform(consentUrl);
    const head = await api.app.inject({ method: 'HEAD', url: `${back.pathname}${back.search}`, headers: { cookie } });
    expect(head.statusCode).toBe(200);
    expect((await api.request<Connection>({ method: 'GET', url: `/api/v1/connections/${connection.id}`, key: u.key })).body.status).toBe('pending');
    expect((await atCallback(api, back, cookie)).status).toBe(200);
    expect((await api.request<Connection>({ method: 'GET', url: `/api/v1/connections/${connection.id}`, key: u.key })).body.status).toBe('connected');
  });

  it('refuses a returnUrl on an origin the operator does not list in HERALD_RETURN_URL_ORIGINS, storing nothing', async () => {
    const u = await userWithKey(api.db);
    for (const returnUrl of [
      'https://evil.example/phish',
      'https://app.example.com.evil.example/',
      'http://app.example.com/',
      'https://app.example.com:8443/',
    ]) {
      const bad = await api.request<{ error: string; details: unknown[] }>({
        method: 'POST',
        url: '/api/v1/connections',
        key: u.key,
        body: { platform: 'x', returnUrl },
      });
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({
        error: 'Invalid request',
        code: 'invalid_request',
        details: [
          {
            code: 'invalid_string',
            expected: 'a URL on an origin listed in HERALD_RETURN_URL_ORIGINS',
            received: returnUrl,
            path: ['returnUrl'],
            message: "returnUrl must be on one of this server's return origins: https://app.example.com, http://localhost:8080",
          },
        ],
      });
    }
    expect((await start(u, { platform: 'x', returnUrl: 'http://localhost:8080/back' })).status).toBe('pending');
    const rows = await api.db.selectFrom('connections').select('return_url').where('user_id', '=', u.userId).execute();
    expect(rows).toEqual([{ return_url: 'http://localhost:8080/back' }]);
  });

  it('revokes the tokens at X when the account is disconnected, after answering', async () => {
    const u = await userWithKey(api.db);
    const { account } = await connectX(u, 'kai');
    const before = x.revocations.length;
    expect(await api.request({ method: 'DELETE', url: `/api/v1/accounts/${account.id}`, key: u.key })).toMatchObject({ status: 200, body: { success: true } });
    await vi.waitFor(() => expect(x.revocations.length - before).toBe(2), { timeout: 5000, interval: 10 });
    expect(
      x.revocations
        .slice(before)
        .map((r) => r.kind)
        .sort(),
    ).toEqual(['access', 'refresh']);
    expect(await api.db.selectFrom('accounts').select('credentials').where('id', '=', account.id).executeTakeFirstOrThrow()).toEqual({ credentials: null });
  });

  it('refuses credentials for X on connectAccount, pointing to the consent flow', async () => {
    const u = await userWithKey(api.db);
    const res = await api.request<{ details: { message: string }[] }>({
      method: 'POST',
      url: '/api/v1/accounts',
      key: u.key,
      body: { platform: 'x', credentials: { accessToken: 'pasted' } },
    });
    expect(res.status).toBe(400);
    expect(res.body.details[0]?.message).toBe("x accounts connect through the platform's consent page: start with POST /api/v1/connections");
  });
});

describe('publishing to X', () => {
  it('posts two images with their alt texts and a three-part thread as self-replies, in order', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectX(u, 'dee');
    const first = await uploadMedia(api, u, files.png64, 'a.png', 'image/png', 'A blue square');
    const second = await uploadMedia(api, u, files.jpeg1080x1350, 'b.jpg', 'image/jpeg', 'A red rectangle');
    const id = await publishNow(api, u, {
      accountIds: [account.id],
      postType: 'thread',
      mediaIds: [first, second],
      threadParts: { [account.id]: ['One: the start', 'Two: the middle', 'Three: the end'] },
      accountOverrides: [{ accountId: account.id, fields: { replySettings: 'following' } }],
    });
    await api.publishing.drain();
    const posts = postsOf(user);
    expect(posts.map((p) => [p.text, p.inReplyToId])).toEqual([
      ['One: the start', null],
      ['Two: the middle', posts[0]?.id],
      ['Three: the end', posts[1]?.id],
    ]);
    expect(posts[0]?.replySettings).toBe('following');
    expect(posts[0]?.mediaIds).toHaveLength(2);
    expect(posts[0]?.mediaIds.map((m) => posts[0]?.altTexts[m])).toEqual(['A blue square', 'A red rectangle']);
    expect(x.media.get(posts[0]?.mediaIds[0] ?? '')?.bytes).toEqual(files.png64);
    const detail = await postDetail(api, u, id);
    expect(detail).toMatchObject({
      status: 'published',
      targets: [{ status: 'published', platformPostId: posts[0]?.id, url: `https://x.com/dee/status/${posts[0]?.id}` }],
    });
  });

  it('uploads a video in segments and posts it once X has processed it, the worker never waiting in between', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectX(u, 'dax');
    const video = await uploadMedia(api, u, files.mp4Portrait, 'v.mp4', 'video/mp4', 'A test pattern');
    x.videoPolls = 2;
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'A video on X', mediaIds: [video] });
    await api.publishing.drain();
    const [post] = postsOf(user);
    const uploaded = x.media.get(post?.mediaIds[0] ?? '');
    expect(uploaded).toMatchObject({ kind: 'video', state: 'succeeded', category: 'tweet_video', mediaType: 'video/mp4' });
    expect(uploaded?.bytes).toEqual(files.mp4Portrait);
    const statusChecks = x.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/2/media/upload') && r.path.includes(post?.mediaIds[0] ?? '-'));
    expect(statusChecks.length).toBeGreaterThanOrEqual(2);
    expect(await postDetail(api, u, id)).toMatchObject({ status: 'published', targets: [{ status: 'published', platformPostId: post?.id }] });
  });

  it('fails with media_error, posting nothing, when X cannot process the video', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectX(u, 'dot');
    const video = await uploadMedia(api, u, files.mp4Portrait, 'v.mp4', 'video/mp4', 'Broken');
    x.failNextVideo('Video codec not supported');
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'A broken video', mediaIds: [video] });
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).targets[0]).toMatchObject({
      status: 'failed',
      error: { category: 'media_error', retrying: false, message: 'X could not process the video: Video codec not supported' },
    });
    expect(postsOf(user)).toEqual([]);
  });

  it('finds the post a worker created before losing the answer, and records it without posting again', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectX(u, 'eve');
    x.fail('tweets', { kind: 'commitThenDrop' });
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Sent once, see https://example.com/a' });
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).targets[0]?.error).toMatchObject({ category: 'platform_error', retrying: true });
    await api.publishing.drainAhead(2 * MINUTE);
    expect(postsOf(user)).toHaveLength(1);
    expect(tweetCalls('Sent once, see https://example.com/a')).toHaveLength(1);
    expect((await postDetail(api, u, id)).targets[0]).toMatchObject({ status: 'published', platformPostId: postsOf(user)[0]?.id });
  });

  it('posts once more when the account shows the lost attempt created nothing', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectX(u, 'fay');
    x.fail('tweets', { kind: 'answer', status: 503 });
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Never arrived' });
    await api.publishing.drain();
    await api.publishing.drainAhead(2 * MINUTE);
    expect(tweetCalls('Never arrived')).toHaveLength(2);
    expect(postsOf(user).map((p) => p.text)).toEqual(['Never arrived']);
    expect((await postDetail(api, u, id)).status).toBe('published');
  });

  it('sends nothing again when the account cannot be read after a lost answer: the target is unknown', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectX(u, 'gus');
    x.fail('tweets', { kind: 'commitThenDrop' });
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'In doubt on X' });
    await api.publishing.drain();
    x.fail('timeline', {
      kind: 'answer',
      status: 403,
      body: { title: 'Forbidden', detail: 'You are not permitted to perform this action.', type: 'about:blank', status: 403 },
    });
    await api.publishing.drainAhead(2 * MINUTE);
    const detail = await postDetail(api, u, id);
    expect(detail.targets[0]).toMatchObject({ status: 'unknown', error: { retrying: false } });
    expect(detail.targets[0]?.error?.message).toMatch(/^X could not be asked whether an earlier attempt published this/);
    expect(tweetCalls('In doubt on X')).toHaveLength(1);
    expect(postsOf(user)).toHaveLength(1);
  });

  it('refreshes an expired access token once for two publications at the same moment: one valid token, the account stays ok', async () => {
    const u = await userWithKey(api.db);
    const { account, user } = await connectX(u, 'hal');
    x.expireAccessTokens();
    const before = x.refreshes();
    const ids = [
      await publishNow(api, u, { accountIds: [account.id], caption: 'First at once' }),
      await publishNow(api, u, { accountIds: [account.id], caption: 'Second at once' }),
    ];
    await api.publishing.drain(2);
    expect(x.refreshes() - before).toBe(1);
    for (const id of ids) expect((await postDetail(api, u, id)).status).toBe('published');
    expect(
      postsOf(user)
        .map((p) => p.text)
        .sort(),
    ).toEqual(['First at once', 'Second at once']);
    const accounts = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key });
    expect(accounts.body.data).toEqual([expect.objectContaining({ id: account.id, health: 'ok' })]);
  });

  describe("a token endpoint's 401 with a Basic challenge is a refusal of Herald's client id or secret", () => {
    const challenge = {
      kind: 'answer',
      status: 401,
      headers: { 'www-authenticate': 'Basic realm="X"' },
      body: { error: 'unauthorized_client', error_description: 'Missing valid authorization header' },
    } as const;
    const refused = "X refused Herald's client id or secret: the operator must check them";

    it('on connect: the connection fails with client_refused and nothing is connected', async () => {
      const u = await userWithKey(api.db);
      x.consentAs(x.addUser({ username: 'kai', name: 'Kai on X' }));
      const connection = await start(u, { platform: 'x' });
      x.fail('token', challenge);
      expect((await consent(connection)).status).toBe(200);
      const done = await api.request<Connection>({ method: 'GET', url: `/api/v1/connections/${connection.id}`, key: u.key });
      expect(done.body).toMatchObject({ status: 'failed', error: refused, errorCode: 'client_refused', accountIds: [] });
      expect((await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key })).body.data).toEqual([]);
    });

    it("on refresh: the target says so and is retried, and the account's tokens are not taken for revoked", async () => {
      const u = await userWithKey(api.db);
      const { account } = await connectX(u, 'lea');
      x.expireAccessTokens();
      x.fail('token', challenge);
      const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Refused client' });
      await api.publishing.drain();
      expect((await postDetail(api, u, id)).targets[0]).toMatchObject({
        status: 'failed',
        error: { category: 'platform_error', retrying: true, message: refused },
      });
      const accounts = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key });
      expect(accounts.body.data).toEqual([expect.objectContaining({ id: account.id, health: 'ok' })]);
    });
  });

  it('reads at most 64 KiB of a refresh answer: a larger one fails the refresh, retried, and stores nothing of it', async () => {
    const u = await userWithKey(api.db);
    const { account } = await connectX(u, 'max');
    x.expireAccessTokens();
    const huge = 'a'.repeat(200_000);
    x.fail('token', { kind: 'answer', status: 200, body: { token_type: 'bearer', expires_in: 7200, access_token: huge, refresh_token: huge } });
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Huge refresh answer' });
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).targets[0]).toMatchObject({
      status: 'failed',
      error: { category: 'platform_error', retrying: true, message: 'X could not refresh the access token' },
    });
    const stored = await api.db
      .selectFrom('accounts')
      .select((eb) => eb.fn('octet_length', ['credentials']).as('size'))
      .where('id', '=', account.id)
      .executeTakeFirstOrThrow();
    expect(Number(stored.size)).toBeLessThan(8 * 1024);
  });

  it('names the cause when the operator has no X credits left, and does not retry', async () => {
    const u = await userWithKey(api.db);
    const { account } = await connectX(u, 'ivy');
    x.fail('tweets', { kind: 'answer', status: 402 });
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'No credits' });
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).targets[0]).toMatchObject({
      status: 'failed',
      error: { category: 'platform_error', retrying: false, message: expect.stringContaining('no credits left (CreditsDepleted)') as unknown },
    });
  });

  it('waits until the reset X gives when rate limited', async () => {
    const u = await userWithKey(api.db);
    const { account } = await connectX(u, 'jo');
    const reset = Math.floor(Date.now() / 1000) + 900;
    x.fail('tweets', {
      kind: 'answer',
      status: 429,
      headers: { 'x-rate-limit-limit': '100', 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': String(reset) },
    });
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Limited' });
    await api.publishing.drain();
    const target = (await postDetail(api, u, id)).targets[0];
    expect(target?.error).toMatchObject({ category: 'rate_limited', retrying: true, message: 'X rate limit reached' });
    expect(Date.parse(target?.error?.nextAttemptAt ?? '')).toBeGreaterThanOrEqual(reset * 1000);
  });
});
