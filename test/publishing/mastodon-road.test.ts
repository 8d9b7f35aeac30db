import { connectMastodon } from '../support/mastodon-accounts.js';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { useTestApi, type Schemas } from '../support/api.js';
import { consentInBrowser } from '../support/consent.js';
import { userWithKey, type TestUser } from '../support/fixtures.js';
import { postDetail, publishNow, uploadMedia } from '../support/posts.js';
import { startMastodonFake, type MastodonFake } from '../support/mastodon-fake.js';
import { makeMediaFiles, type MediaFiles } from '../support/media-files.js';
import { unusedPort } from '../support/ports.js';
import { expectEventMatchesSpec } from '../support/contract.js';
import { startTestReceiver, verifiedWith } from '../support/webhook-receiver.js';
import { publishNextDuePost } from '../../src/domain/publishing/publication.js';
import { randomBytes } from 'node:crypto';
import { buildApp } from '../../src/api/app.js';
import { ServiceState } from '../../src/api/service-state.js';
import { readEnvironment } from '../../src/cli/wiring/configuration.js';
import { createDependencies } from '../../src/cli/wiring/dependencies.js';
import { injectChecked, UNLIMITED } from '../support/api.js';
import { runLogger } from '../support/run-log.js';

// The whole road to Mastodon: connect through the API, publish with the worker, and assert what
// the instance (a fake written from Mastodon's documentation) received and holds.
const api = useTestApi();
let mastodon: MastodonFake;
let files: MediaFiles;
const MINUTE = 60_000;

beforeAll(async () => {
  mastodon = await startMastodonFake();
  files = makeMediaFiles();
});
afterAll(async () => {
  await mastodon?.close();
  files?.cleanup();
});

async function connect(u: TestUser, username: string): Promise<{ account: Schemas['Account']; id: string }> {
  const { account, instanceId } = await connectMastodon(api, mastodon, u, username, `${username} display`);
  return { account, id: instanceId };
}

const statusesOf = (accountId: string) => mastodon.statuses.filter((s) => s.accountId === accountId);
const statusRequestsOf = (text: string) => mastodon.requests.filter((r) => r.path === '/api/v1/statuses' && (r.body as { status?: string }).status === text);

describe('connecting a Mastodon account', () => {
  it('verifies the token with the instance and takes the username and display name from it', async () => {
    const u = await userWithKey(api.db);
    const { account } = await connect(u, 'ada');
    expect(account).toMatchObject({ platform: 'mastodon', username: 'ada', displayName: 'ada display', mode: 'live', health: 'ok' });
  });

  it('answers 400 for a refused token and 502 for an instance that does not answer', async () => {
    const u = await userWithKey(api.db);
    const refused = await api.request({
      method: 'POST',
      url: '/api/v1/accounts',
      key: u.key,
      body: { platform: 'mastodon', credentials: { instance: mastodon.url, accessToken: 'nope' } },
    });
    expect(refused).toMatchObject({ status: 400, body: { error: 'Invalid credentials: Mastodon refused the access token: The access token is invalid' } });
    const down = await api.request<{ error: string }>({
      method: 'POST',
      url: '/api/v1/accounts',
      key: u.key,
      body: { platform: 'mastodon', credentials: { instance: `http://127.0.0.1:${await unusedPort()}`, accessToken: 'x' } },
    });
    expect(down.status).toBe(502);
    expect(down.body.error).toMatch(/^Platform unreachable: 127\.0\.0\.1:\d+ did not answer/);
  });
});

describe("connecting a Mastodon account through its instance's consent page", () => {
  type Connection = Schemas['Connection'];

  async function throughConsent(u: TestUser, body: Record<string, unknown>) {
    const started = await api.request<Connection>({ method: 'POST', url: '/api/v1/connections', key: u.key, body });
    expect(started.status).toBe(201);
    const { consentUrl, callback } = await consentInBrowser(api, started.body.authorizationUrl ?? '');
    expect(callback.status).toBe(200);
    return {
      started: started.body,
      consentUrl,
      done: (await api.request<Connection>({ method: 'GET', url: `/api/v1/connections/${started.body.id}`, key: u.key })).body,
    };
  }

  it('registers Herald on the instance once, sends the person to its consent page with PKCE, and connects the account as a pasted token would', async () => {
    const u = await userWithKey(api.db);
    const registeredBefore = mastodon.apps.length;
    const who = mastodon.addAccount('oona', 'Oona');
    mastodon.consentAs(who);
    const { consentUrl: consent, done } = await throughConsent(u, { platform: 'mastodon', instance: `${mastodon.url}/some/path` });
    expect(`${consent.origin}${consent.pathname}`).toBe(`${mastodon.url}/oauth/authorize`);
    expect(Object.fromEntries(consent.searchParams)).toMatchObject({
      scope: 'read:accounts read:statuses write:statuses write:media',
      code_challenge_method: 'S256',
    });
    expect(done).toMatchObject({ platform: 'mastodon', status: 'connected', error: null });
    const accounts = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key });
    expect(accounts.body.data).toEqual([
      expect.objectContaining({ id: done.accountId, platform: 'mastodon', username: 'oona', displayName: 'Oona', mode: 'live', health: 'ok' }),
    ]);
    // It publishes with the token the instance gave.
    await publishNow(api, u, { accountIds: [done.accountId], caption: 'Connected by consent' });
    await api.publishing.drain();
    expect(mastodon.statuses.filter((st) => st.accountId === who.id).map((st) => st.text)).toEqual(['Connected by consent']);

    const other = await userWithKey(api.db);
    mastodon.consentAs(mastodon.addAccount('piet'));
    expect((await throughConsent(other, { platform: 'mastodon', instance: mastodon.url })).done.status).toBe('connected');
    expect(mastodon.apps.length - registeredBefore).toBe(1);
  });

  it('revokes the token a consent gave at the instance, through the app that issued it, when the account is disconnected', async () => {
    const u = await userWithKey(api.db);
    const who = mastodon.addAccount('rosa');
    mastodon.consentAs(who);
    const { done } = await throughConsent(u, { platform: 'mastodon', instance: mastodon.url });
    // The instance answers a revocation by an app other than the token's 403, recording none: the one recorded came through Herald's app.
    const token = who.token;
    const before = mastodon.revocations.length;
    expect(await api.request({ method: 'DELETE', url: `/api/v1/accounts/${done.accountId}`, key: u.key })).toMatchObject({ status: 200 });
    await vi.waitFor(() => expect(mastodon.revocations.slice(before)).toEqual([expect.objectContaining({ token, revoked: true })]), {
      timeout: 5000,
      interval: 10,
    });
  });

  it('forgets connections a week after they end, and an app registered on an instance through which nobody connected in a week', async () => {
    const u = await userWithKey(api.db);
    const WEEK_AND_A_DAY = new Date(Date.now() - 8 * 24 * 60 * 60_000);
    const SIX_DAYS = new Date(Date.now() - 6 * 24 * 60 * 60_000);
    // An instance where a person connected, and one where the connection was started and abandoned.
    mastodon.consentAs(mastodon.addAccount('sami'));
    const { done: connected } = await throughConsent(u, { platform: 'mastodon', instance: mastodon.url });
    const abandonedAt = `http://localhost:${new URL(mastodon.url).port}`;
    const appsBefore = mastodon.apps.length;
    const abandoned = await api.request<Connection>({
      method: 'POST',
      url: '/api/v1/connections',
      key: u.key,
      body: { platform: 'mastodon', instance: abandonedAt },
    });
    expect([abandoned.status, mastodon.apps.length - appsBefore]).toEqual([201, 1]);
    const recent = await api.request<Connection>({
      method: 'POST',
      url: '/api/v1/connections',
      key: u.key,
      body: { platform: 'mastodon', instance: mastodon.url },
    });
    await api.db.updateTable('connections').set({ ended_at: WEEK_AND_A_DAY }).where('id', '=', connected.id).execute();
    await api.db.updateTable('connections').set({ expires_at: WEEK_AND_A_DAY }).where('id', '=', abandoned.body.id).execute();
    await api.db.updateTable('connections').set({ expires_at: SIX_DAYS }).where('id', '=', recent.body.id).execute();
    // created_at is never updated by Herald; the test ages it as a week's clock would.
    await sql`update instance_apps set created_at = ${WEEK_AND_A_DAY}`.execute(api.db);

    expect(await api.publishing.keepHouse()).toBe(true);
    const status = async (id: string) => (await api.request({ method: 'GET', url: `/api/v1/connections/${id}`, key: u.key })).status;
    expect([await status(connected.id), await status(abandoned.body.id), await status(recent.body.id)]).toEqual([404, 404, 200]);
    const apps = await api.db.selectFrom('instance_apps').select('instance').where('platform', '=', 'mastodon').execute();
    expect(apps.map((a) => a.instance)).toContain(mastodon.url);
    expect(apps.map((a) => a.instance)).not.toContain(abandonedAt);
    // The account connected through the kept app is untouched.
    const accounts = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key });
    expect(accounts.body.data.map((a) => a.id)).toContain(connected.accountId);
  });

  describe('a hostile instance cannot exhaust memory or storage through its token answer', () => {
    // A few MiB over the 64 KiB limit prove the bound; the bodies are streamed, never built whole.
    const BIG = 4 * 1024 * 1024;
    const cases = [
      { name: 'a gzip bomb', fault: { on: 'token', kind: 'endless', bytes: BIG, gzip: true }, error: /answered the code exchange with more than 64 KiB/ },
      {
        name: 'a huge plain body',
        fault: { on: 'token', kind: 'endless', bytes: BIG, gzip: false },
        error: /answered the code exchange with more than 64 KiB/,
      },
      { name: 'an over-long access token', fault: { on: 'token', kind: 'longToken', length: 20_000 }, error: /answered a token longer than 8192 characters/ },
    ] as const;
    for (const { name, fault, error } of cases)
      it(`fails the connection clearly, stores nothing and keeps answering, for ${name}`, async () => {
        const u = await userWithKey(api.db);
        mastodon.consentAs(mastodon.addAccount(`hostile${randomBytes(3).toString('hex')}`));
        mastodon.fail(fault);
        const { done } = await throughConsent(u, { platform: 'mastodon', instance: mastodon.url });
        expect(done).toMatchObject({ status: 'failed', errorCode: 'platform_error', accountId: null, accountIds: [] });
        expect(done.error).toMatch(error);
        const accounts = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key });
        expect(accounts.status).toBe(200);
        expect(accounts.body.data).toEqual([]);
        const rows = await api.db
          .selectFrom('accounts')
          .select((eb) => eb.fn.max(eb.fn('octet_length', ['credentials'])).as('largest'))
          .executeTakeFirstOrThrow();
        expect(Number(rows.largest ?? 0)).toBeLessThan(64 * 1024);
      });
  });

  it("says the instance refused Herald's client id or secret when its token endpoint answers 401 with a Basic challenge", async () => {
    const u = await userWithKey(api.db);
    mastodon.consentAs(mastodon.addAccount('refusedclient'));
    mastodon.fail({ on: 'token', kind: 'answer', status: 401, headers: { 'www-authenticate': 'Basic realm="Doorkeeper"' }, body: { error: 'invalid_client' } });
    const { done } = await throughConsent(u, { platform: 'mastodon', instance: mastodon.url });
    expect(done).toMatchObject({ status: 'failed', errorCode: 'client_refused', accountIds: [] });
    expect(done.error).toBe(`${new URL(mastodon.url).host} refused Herald's client id or secret: the operator must check them`);
  });

  it('needs the instance, and refuses one on a private address without HERALD_ALLOW_PRIVATE_NETWORK, storing and registering nothing', async () => {
    const u = await userWithKey(api.db);
    const missing = await api.request<{ code: string; details: { path: string[] }[] }>({
      method: 'POST',
      url: '/api/v1/connections',
      key: u.key,
      body: { platform: 'mastodon' },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.details.map((d) => d.path)).toEqual([['instance']]);

    const registeredBefore = mastodon.apps.length;
    const strict = new ServiceState();
    const env = readEnvironment({ HERALD_SECRET_KEY: randomBytes(32).toString('base64'), HERALD_DATA_DIR: api.media.root });
    strict.attach(await createDependencies(env, api.db, runLogger(), api.media));
    const app = await buildApp({ context: strict, rateLimits: { limits: UNLIMITED }, loggerInstance: runLogger() });
    try {
      const refused = await injectChecked<{ error: string; code: string }>(app, {
        method: 'POST',
        url: '/api/v1/connections',
        key: u.key,
        body: { platform: 'mastodon', instance: mastodon.url },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.code).toBe('url_not_allowed');
      expect(refused.body.error).toMatch(/^URL not allowed: /);
    } finally {
      await app.close();
    }
    expect(mastodon.apps.length).toBe(registeredBefore);
    const stored = await api.db.selectFrom('connections').select('id').where('user_id', '=', u.userId).execute();
    expect(stored).toEqual([]);
  });
});

describe('publishing to Mastodon', () => {
  it('uploads an image with its alt text, then posts the status with it', async () => {
    const u = await userWithKey(api.db);
    const { account, id: mastodonId } = await connect(u, 'bea');
    const media = await uploadMedia(api, u, files.png64, 'a.png', 'image/png', 'A small square');
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'With a picture', mediaIds: [media] });
    await api.publishing.drain();
    const [status] = statusesOf(mastodonId);
    expect(status).toMatchObject({ text: 'With a picture', inReplyToId: null });
    const attached = mastodon.media.get(status?.mediaIds[0] ?? '');
    expect(attached).toMatchObject({ description: 'A small square', mime: 'image/png' });
    expect(attached?.bytes).toEqual(files.png64);
    expect((await postDetail(api, u, id)).targets[0]).toMatchObject({ status: 'published', platformPostId: status?.id, url: status?.url });
  });

  it('waits for a video through 202 and 206 before posting it', async () => {
    const u = await userWithKey(api.db);
    const { account, id: mastodonId } = await connect(u, 'cy');
    const media = await uploadMedia(api, u, files.mp4Portrait, 'v.mp4', 'video/mp4', 'A test pattern');
    mastodon.videoProcessing.polls = 2;
    await publishNow(api, u, { accountIds: [account.id], caption: 'A video', mediaIds: [media] });
    await api.publishing.drain();
    const polls = mastodon.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/api/v1/media/'));
    expect(polls.length).toBeGreaterThanOrEqual(2);
    expect(statusesOf(mastodonId)).toHaveLength(1);
    expect(mastodon.media.get(statusesOf(mastodonId)[0]?.mediaIds[0] ?? '')).toMatchObject({ type: 'video', pollsLeft: 0 });
  });

  it('leaves a video that is still processing as publishing, with no worker waiting, and any worker resumes it without uploading again', async () => {
    const u = await userWithKey(api.db);
    const { account, id: mastodonId } = await connect(u, 'cyd');
    const media = await uploadMedia(api, u, files.mp4Portrait, 'v.mp4', 'video/mp4', 'Slow to process');
    mastodon.videoProcessing.polls = 1000;
    try {
      const id = await publishNow(api, u, { accountIds: [account.id], caption: 'A slow video', mediaIds: [media] });
      // One worker step: it uploads, hears 202, records the upload and moves on.
      expect(await publishNextDuePost(api.publishing.deps)).toBe('published');
      const waiting = await postDetail(api, u, id);
      expect(waiting).toMatchObject({ status: 'publishing', targets: [{ status: 'publishing', error: null }] });
      const part = await api.db.selectFrom('target_parts').select('progress').where('post_id', '=', id).executeTakeFirstOrThrow();
      expect(JSON.parse(part.progress ?? 'null')).toMatchObject({ mediaIds: [expect.any(String)] });
      // Another worker (the state is all in the database) resumes it once the instance is done.
      const uploaded = [...mastodon.media.values()].find((m) => m.id === (JSON.parse(part.progress ?? '{}') as { mediaIds: string[] }).mediaIds[0]);
      if (uploaded !== undefined) uploaded.pollsLeft = 0;
      await api.publishing.drain();
      expect(await postDetail(api, u, id)).toMatchObject({ status: 'published', targets: [{ status: 'published' }] });
      // The same attempt, resumed: not counted again, and never in doubt.
      expect(await api.db.selectFrom('post_targets').select(['attempts', 'in_doubt']).where('post_id', '=', id).executeTakeFirstOrThrow()).toEqual({
        attempts: 1,
        in_doubt: false,
      });
      expect(
        mastodon.requests.filter(
          (r) => r.method === 'POST' && r.path === '/api/v2/media' && (r.body as { description?: string }).description === 'Slow to process',
        ),
      ).toHaveLength(1);
      expect(statusesOf(mastodonId).map((s) => s.mediaIds)).toEqual([[uploaded?.id]]);
    } finally {
      mastodon.videoProcessing.polls = 2;
    }
  });

  it('fails with media_error, and posts nothing, when the instance cannot process the video', async () => {
    const u = await userWithKey(api.db);
    const { account, id: mastodonId } = await connect(u, 'dee');
    const media = await uploadMedia(api, u, files.mp4Portrait, 'v.mp4', 'video/mp4', 'Broken');
    mastodon.videoProcessing.polls = 1;
    mastodon.videoProcessing.fails = true;
    try {
      const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Broken video', mediaIds: [media] });
      await api.publishing.drain();
      expect((await postDetail(api, u, id)).targets[0]).toMatchObject({
        status: 'failed',
        error: { category: 'media_error', retrying: false, message: 'Error processing thumbnail for uploaded media' },
      });
      expect(statusesOf(mastodonId)).toEqual([]);
    } finally {
      mastodon.videoProcessing.fails = false;
    }
  });

  it('posts a thread and a first comment as replies, each with its own Idempotency-Key', async () => {
    const u = await userWithKey(api.db);
    const { account, id: mastodonId } = await connect(u, 'eve');
    await publishNow(api, u, { accountIds: [account.id], postType: 'thread', threadParts: { [account.id]: ['1/3', '2/3', '3/3'] }, firstComment: 'comment' });
    await api.publishing.drain();
    const chain = statusesOf(mastodonId);
    expect(chain.map((s) => [s.text, s.inReplyToId])).toEqual([
      ['1/3', null],
      ['2/3', chain[0]?.id],
      ['3/3', chain[1]?.id],
      ['comment', chain[2]?.id],
    ]);
    const keys = ['1/3', '2/3', '3/3', 'comment'].map((t) => statusRequestsOf(t)[0]?.idempotencyKey);
    expect(new Set(keys).size).toBe(4);
    for (const key of keys) expect(key).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('repeats a status the instance created but answered 503 for with the same key, when its account cannot be looked at: one status', async () => {
    const u = await userWithKey(api.db);
    const { account, id: mastodonId } = await connect(u, 'fay');
    mastodon.fail({ on: 'statuses', kind: 'commitThenAnswer', status: 503 });
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Only once' });
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).targets[0]?.error).toMatchObject({ category: 'platform_error', retrying: true });
    // Within the key's hour a repeat is safe even when the account's statuses cannot be read.
    mastodon.fail({ on: 'timeline', kind: 'answer', status: 503, body: { error: 'Service unavailable' } });
    api.publishing.runAhead(2 * MINUTE);
    try {
      await api.publishing.drain();
    } finally {
      api.publishing.runAhead(0);
    }
    expect(statusesOf(mastodonId)).toHaveLength(1);
    const sent = statusRequestsOf('Only once');
    expect(sent).toHaveLength(2);
    expect(sent[1]?.idempotencyKey).toBe(sent[0]?.idempotencyKey);
    expect((await postDetail(api, u, id)).targets[0]).toMatchObject({ status: 'published', platformPostId: statusesOf(mastodonId)[0]?.id });
  });

  describe('once the instance has forgotten the Idempotency-Key, the account is looked at before anything is sent again', () => {
    /** A status whose answer was lost (or never came), retried only after the key's hour. */
    async function inDoubtPastTheHour(u: TestUser, accountId: string, caption: string, fault: Parameters<MastodonFake['fail']>[0]) {
      mastodon.fail(fault);
      const id = await publishNow(api, u, { accountIds: [accountId], caption });
      await api.publishing.drain();
      expect((await postDetail(api, u, id)).targets[0]?.error).toMatchObject({ retrying: true });
      mastodon.advance(61 * MINUTE);
      api.publishing.runAhead(56 * MINUTE);
      try {
        await api.publishing.drain();
      } finally {
        api.publishing.runAhead(0);
        mastodon.advance(-61 * MINUTE);
      }
      return id;
    }

    it('finds the status an earlier attempt posted, and records it without posting again', async () => {
      const u = await userWithKey(api.db);
      const { account, id: mastodonId } = await connect(u, 'gil');
      const id = await inDoubtPastTheHour(u, account.id, 'Posted, answer lost', { on: 'statuses', kind: 'commitThenAnswer', status: 503 });
      const [status] = statusesOf(mastodonId);
      expect(statusesOf(mastodonId)).toHaveLength(1);
      expect(statusRequestsOf('Posted, answer lost')).toHaveLength(1);
      expect(await postDetail(api, u, id)).toMatchObject({
        status: 'published',
        targets: [{ status: 'published', platformPostId: status?.id, url: status?.url }],
      });
    });

    it('posts once when the account shows the earlier attempt posted nothing', async () => {
      const u = await userWithKey(api.db);
      const { account, id: mastodonId } = await connect(u, 'gwen');
      const id = await inDoubtPastTheHour(u, account.id, 'Never arrived', {
        on: 'statuses',
        kind: 'answer',
        status: 503,
        body: { error: 'Service unavailable' },
      });
      expect((await postDetail(api, u, id)).status).toBe('published');
      expect(statusRequestsOf('Never arrived')).toHaveLength(2);
      expect(statusesOf(mastodonId).map((s) => s.text)).toEqual(['Never arrived']);
    });
  });

  it('never reposts blindly when the account cannot be looked at: the target becomes unknown for a person to decide', async () => {
    const u = await userWithKey(api.db);
    const { account, id: mastodonId } = await connect(u, 'gus');
    // A 503 without creating anything: Herald cannot tell it from one that did.
    mastodon.fail({ on: 'statuses', kind: 'answer', status: 503, body: { error: 'Service unavailable' } });
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'In doubt' });
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).targets[0]?.error).toMatchObject({ retrying: true });
    // The next try comes only after the instance has forgotten the key, and its account's statuses are not to be had.
    mastodon.advance(61 * MINUTE);
    api.publishing.runAhead(56 * MINUTE);
    mastodon.fail({ on: 'timeline', kind: 'answer', status: 403, body: { error: 'This action is not allowed' } });
    try {
      await api.publishing.drain();
      const unknown = await postDetail(api, u, id);
      expect(unknown.status).toBe('failed');
      expect(unknown.targets[0]).toMatchObject({ status: 'unknown', error: { retrying: false } });
      expect(unknown.targets[0]?.error?.message).toMatch(/check the account, then retry with includeUnknown=true/);
      expect(statusRequestsOf('In doubt')).toHaveLength(1);

      expect(await api.request({ method: 'POST', url: `/api/v1/posts/${id}/retry`, key: u.key })).toMatchObject({ status: 400 });
      // A person checked the account, found nothing, and decided: publish it.
      expect((await api.request({ method: 'POST', url: `/api/v1/posts/${id}/retry?includeUnknown=true`, key: u.key })).status).toBe(202);
      await api.publishing.drain();
    } finally {
      api.publishing.runAhead(0);
      mastodon.advance(-61 * MINUTE);
    }
    expect((await postDetail(api, u, id)).status).toBe('published');
    expect(statusesOf(mastodonId).map((s) => s.text)).toEqual(['In doubt']);
  });

  it("honours a 429's X-RateLimit-Reset before trying again", async () => {
    const u = await userWithKey(api.db);
    const { account, id: mastodonId } = await connect(u, 'hal');
    const reset = new Date(Date.now() + 3 * MINUTE);
    mastodon.fail({
      on: 'statuses',
      kind: 'answer',
      status: 429,
      headers: { 'x-ratelimit-limit': '300', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset.toISOString() },
      body: { error: 'Too many requests' },
    });
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Slow down' });
    await api.publishing.drain();
    const waiting = (await postDetail(api, u, id)).targets[0]?.error;
    expect(waiting).toMatchObject({ category: 'rate_limited', retrying: true, message: 'Too many requests' });
    expect(Date.parse(waiting?.nextAttemptAt ?? '')).toBeGreaterThanOrEqual(reset.getTime());
    api.publishing.runAhead(2 * MINUTE);
    try {
      await api.publishing.drain();
      expect(statusesOf(mastodonId)).toEqual([]);
      api.publishing.runAhead(4 * MINUTE);
      await api.publishing.drain();
    } finally {
      api.publishing.runAhead(0);
    }
    expect(statusesOf(mastodonId)).toHaveLength(1);
  });

  it('marks the account needs_reconnect on a revoked token, and a reconnect keeps its id and heals it', async () => {
    const u = await userWithKey(api.db);
    const { account, id: mastodonId } = await connect(u, 'ivy');
    const fresh = mastodon.rotateToken(mastodonId);
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Token gone' });
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).targets[0]).toMatchObject({ status: 'failed', error: { category: 'auth_expired', retrying: false } });
    const listed = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key });
    expect(listed.body.data.find((a) => a.id === account.id)).toMatchObject({
      health: 'needs_reconnect',
      healthMessage: expect.stringMatching(/access token/) as unknown,
    });

    const again = await api.request<Schemas['Account']>({
      method: 'POST',
      url: '/api/v1/accounts',
      key: u.key,
      body: { platform: 'mastodon', credentials: { instance: mastodon.url, accessToken: fresh } },
    });
    expect(again.body).toMatchObject({ id: account.id, health: 'ok', healthMessage: null });
    expect((await api.request({ method: 'POST', url: `/api/v1/posts/${id}/retry`, key: u.key })).status).toBe(202);
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).status).toBe('published');
    expect(statusesOf(mastodonId)).toHaveLength(1);
  });

  it('tells a webhook once that the account needs reconnecting, with the failed target and post', async () => {
    const receiver = await startTestReceiver();
    try {
      const u = await userWithKey(api.db);
      const { account, id: mastodonId } = await connect(u, 'kit');
      const hook = await api.request<Schemas['WebhookWithSecret']>({
        method: 'POST',
        url: '/api/v1/webhooks',
        key: u.key,
        body: { url: receiver.url, eventTypes: ['account.needs_reconnect', 'target.failed', 'post.failed'] },
      });
      expect(hook.status).toBe(201);
      mastodon.rotateToken(mastodonId);
      const first = await publishNow(api, u, { accountIds: [account.id], caption: 'Revoked' });
      await api.publishing.drain();
      await api.publishing.deliverAll();
      const events = receiver.received.map((r) => r.json as { type: string; data: Record<string, unknown> });
      expect(events.map((e) => e.type).sort()).toEqual(['account.needs_reconnect', 'post.failed', 'target.failed']);
      for (const r of receiver.received) {
        expect(verifiedWith(r, hook.body.secret)).toBe(true);
        expectEventMatchesSpec(r.json);
      }
      const listed = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key });
      expect(events.find((e) => e.type === 'account.needs_reconnect')?.data).toEqual(listed.body.data.find((a) => a.id === account.id));
      expect(events.find((e) => e.type === 'post.failed')?.data).toEqual(await postDetail(api, u, first));

      // A second post to the same account fails without the platform; the account's health did not change again, so no second account event.
      await publishNow(api, u, { accountIds: [account.id], caption: 'Still revoked' });
      await api.publishing.drain();
      await api.publishing.deliverAll();
      expect(receiver.received.map((r) => (r.json as { type: string }).type).filter((t) => t === 'account.needs_reconnect')).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it('refuses text the instance refuses with user_content and its message', async () => {
    const u = await userWithKey(api.db);
    const { account } = await connect(u, 'jo');
    mastodon.fail({ on: 'statuses', kind: 'answer', status: 422, body: { error: 'Validation failed: Text character limit of 500 exceeded' } });
    const id = await publishNow(api, u, { accountIds: [account.id], caption: 'Fine here, refused there' });
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).targets[0]).toMatchObject({
      status: 'failed',
      error: { category: 'user_content', retrying: false, attempts: 1, message: 'Validation failed: Text character limit of 500 exceeded' },
    });
  });
});
