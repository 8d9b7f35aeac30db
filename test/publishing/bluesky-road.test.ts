import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BlueskyCredentials } from '../../src/adapters/platforms/bluesky/publisher.js';
import { useTestApi, type Schemas } from '../support/api.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { userWithKey, type TestUser } from '../support/fixtures.js';
import { postDetail, publishNow } from '../support/posts.js';
import { multipartBody } from '../support/media-files.js';
import { startTestPds, type TestPds } from '../support/pds.js';
import { solidPng } from '../support/png.js';
import { unusedPort } from '../support/ports.js';

// The whole road to a real PDS: connect through the API, publish with the worker, read back from the PDS.
const api = useTestApi();
let pds: TestPds;
let proxy: FaultProxy;

beforeAll(async () => {
  pds = await startTestPds();
  proxy = await startFaultProxy(pds.url);
}, 120_000);
afterAll(async () => {
  await proxy?.close();
  await pds?.close();
});

type PostDetail = Schemas['PostDetail'];

async function connect(u: TestUser, name: string, service = proxy.url): Promise<Schemas['Account']> {
  const who = await pds.createAccount(name);
  const res = await api.request<Schemas['Account']>({
    method: 'POST',
    url: '/api/v1/accounts',
    key: u.key,
    body: { platform: 'bluesky', credentials: { service, identifier: who.handle, appPassword: who.appPassword } },
  });
  expect(res.status).toBe(201);
  return res.body;
}

async function didOf(accountId: string): Promise<string> {
  const row = await api.db.selectFrom('accounts').select('platform_user_id').where('id', '=', accountId).executeTakeFirstOrThrow();
  return row.platform_user_id ?? '';
}

/** Stores the account's session with its access token expired, as it is after two hours; the stored row as it was, and the stale session. */
async function expireAccessToken(accountId: string) {
  const row = await api.db.selectFrom('accounts').select(['credentials', 'credentials_version']).where('id', '=', accountId).executeTakeFirstOrThrow();
  const stale = { ...api.publishing.deps.vault.open<BlueskyCredentials>(row.credentials ?? ''), accessJwt: pds.expiredAccessJwt(await didOf(accountId)) };
  await api.db
    .updateTable('accounts')
    .set({ credentials: api.publishing.deps.vault.seal(stale) })
    .where('id', '=', accountId)
    .execute();
  return { row, stale };
}

describe('connecting a Bluesky account', () => {
  it('checks the app password with the PDS, takes the handle from it, and stores only sealed tokens', async () => {
    const u = await userWithKey(api.db);
    const acc = await connect(u, 'carol');
    expect(acc).toMatchObject({ platform: 'bluesky', username: 'carol.test', mode: 'live', health: 'ok' });
    const row = await api.db.selectFrom('accounts').selectAll().where('id', '=', acc.id).executeTakeFirstOrThrow();
    expect(row.platform_user_id).toMatch(/^did:plc:/);
    expect(row.credentials).toMatch(/^v1\./);
    const tokens = api.publishing.deps.vault.open<BlueskyCredentials>(row.credentials ?? '');
    expect(row.credentials).not.toContain(tokens.accessJwt.slice(0, 20));
    expect(JSON.stringify(tokens)).not.toMatch(/appPassword/);
  });

  it('answers 400 for a wrong app password and 502 for a service that does not answer, connecting nothing', async () => {
    const u = await userWithKey(api.db);
    const who = await pds.createAccount('dave');
    const wrong = await api.request({
      method: 'POST',
      url: '/api/v1/accounts',
      key: u.key,
      body: { platform: 'bluesky', credentials: { service: pds.url, identifier: who.handle, appPassword: 'aaaa-bbbb-cccc-dddd' } },
    });
    expect(wrong).toMatchObject({ status: 400, body: { error: 'Invalid credentials: Bluesky refused the identifier or app password' } });
    const down = await api.request<{ error: string }>({
      method: 'POST',
      url: '/api/v1/accounts',
      key: u.key,
      body: { platform: 'bluesky', credentials: { service: `http://127.0.0.1:${await unusedPort()}`, identifier: who.handle, appPassword: who.appPassword } },
    });
    expect(down.status).toBe(502);
    expect(down.body.error).toMatch(/^Platform unreachable: /);
    expect(await api.db.selectFrom('accounts').select('id').where('owner_user_id', '=', u.userId).execute()).toEqual([]);
  });
});

describe('publishing to Bluesky', () => {
  it('publishes an image with alt text and a link, read back from the PDS with its blob and facets', async () => {
    const u = await userWithKey(api.db);
    const acc = await connect(u, 'erin');
    const png = solidPng(40, 30);
    const { payload, contentType } = multipartBody([
      { name: 'file', value: png, filename: 'red.png', type: 'image/png' },
      { name: 'altText', value: 'A red rectangle' },
    ]);
    const uploaded = await api.request<Schemas['Media']>({
      method: 'POST',
      url: '/api/v1/media',
      key: u.key,
      payload,
      headers: { 'content-type': contentType },
    });
    expect(uploaded.status).toBe(201);
    const text = 'Read the notes at https://example.com/notes #herald';
    const id = await publishNow(api, u, { accountIds: [acc.id], caption: text, mediaIds: [uploaded.body.id] });
    await api.publishing.drain();

    const post = await postDetail(api, u, id);
    expect(post.status).toBe('published');
    const did = await didOf(acc.id);
    const records = await pds.listRecords(did);
    expect(records).toHaveLength(1);
    const [record] = records;
    expect(post.targets[0]).toMatchObject({ status: 'published', platformPostId: record?.uri, error: null });
    expect(post.targets[0]?.url).toBe(`https://bsky.app/profile/erin.test/post/${record?.uri.split('/').at(-1)}`);
    const value = record?.value as {
      text: string;
      facets: { index: { byteStart: number; byteEnd: number }; features: { $type: string }[] }[];
      embed: { images: { alt: string; aspectRatio: unknown; image: { ref: { $link: string } } }[] };
    };
    expect(value.text).toBe(text);
    const bytes = Buffer.from(text);
    expect(value.facets.map((f) => [bytes.subarray(f.index.byteStart, f.index.byteEnd).toString(), f.features[0]?.$type])).toEqual([
      ['https://example.com/notes', 'app.bsky.richtext.facet#link'],
      ['#herald', 'app.bsky.richtext.facet#tag'],
    ]);
    const image = value.embed.images[0];
    expect(image).toMatchObject({ alt: 'A red rectangle', aspectRatio: { width: 40, height: 30 } });
    expect(await pds.getBlob(did, image?.image.ref.$link ?? '')).toEqual(png);
  });

  it('publishes a 3-part thread and a first comment as a reply chain', async () => {
    const u = await userWithKey(api.db);
    const acc = await connect(u, 'frank');
    const id = await publishNow(api, u, {
      accountIds: [acc.id],
      postType: 'thread',
      threadParts: { [acc.id]: ['one', 'two', 'three'] },
      firstComment: 'and a comment',
    });
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).status).toBe('published');
    const records = await pds.listRecords(await didOf(acc.id));
    const byText = new Map(records.map((r) => [(r.value as { text: string }).text, r]));
    const ref = (t: string) => ({ uri: byText.get(t)?.uri, cid: byText.get(t)?.cid });
    expect([...byText.keys()].sort()).toEqual(['and a comment', 'one', 'three', 'two']);
    expect(byText.get('one')?.value.reply).toBeUndefined();
    expect(byText.get('two')?.value.reply).toEqual({ root: ref('one'), parent: ref('one') });
    expect(byText.get('three')?.value.reply).toEqual({ root: ref('one'), parent: ref('two') });
    expect(byText.get('and a comment')?.value.reply).toEqual({ root: ref('one'), parent: ref('three') });
  });

  it('waits for the reset time of a 429, then publishes once', async () => {
    const u = await userWithKey(api.db);
    const acc = await connect(u, 'gina');
    const reset = Math.floor(Date.now() / 1000) + 120;
    proxy.plan((req) =>
      req.path.endsWith('repo.putRecord')
        ? { kind: 'answer', status: 429, headers: { 'ratelimit-reset': String(reset) }, body: '{"error":"RateLimitExceeded","message":"Rate Limit Exceeded"}' }
        : undefined,
    );
    try {
      const id = await publishNow(api, u, { accountIds: [acc.id], caption: 'patience' });
      await api.publishing.drain();
      const waiting = await postDetail(api, u, id);
      expect(waiting.status).toBe('publishing');
      expect(waiting.targets[0]?.error).toMatchObject({ category: 'rate_limited', retrying: true, attempts: 1, message: 'Rate Limit Exceeded' });
      expect(Date.parse(waiting.targets[0]?.error?.nextAttemptAt ?? '')).toBeGreaterThanOrEqual(reset * 1000);
      proxy.plan(() => undefined);
      api.publishing.runAhead(125_000);
      await api.publishing.drain();
      expect((await postDetail(api, u, id)).status).toBe('published');
      expect(await pds.listRecords(await didOf(acc.id))).toHaveLength(1);
    } finally {
      proxy.plan(() => undefined);
      api.publishing.runAhead(0);
    }
  });

  it('answers a 502 after the PDS wrote the record by repeating the same call: one record', async () => {
    const u = await userWithKey(api.db);
    const acc = await connect(u, 'hank');
    let failed = false;
    proxy.plan((req) => {
      if (!req.path.endsWith('repo.putRecord') || failed) return undefined;
      failed = true;
      return { kind: 'commitThenAnswer', status: 502, body: 'Bad Gateway' };
    });
    try {
      const id = await publishNow(api, u, { accountIds: [acc.id], caption: 'once only' });
      await api.publishing.drain();
      expect((await postDetail(api, u, id)).targets[0]?.error).toMatchObject({ category: 'platform_error', retrying: true });
      api.publishing.runAhead(61_000);
      await api.publishing.drain();
      const post = await postDetail(api, u, id);
      expect(post.targets[0]).toMatchObject({ status: 'published', error: null });
      const records = await pds.listRecords(await didOf(acc.id));
      expect(records.map((r) => r.uri)).toEqual([post.targets[0]?.platformPostId]);
    } finally {
      proxy.plan(() => undefined);
      api.publishing.runAhead(0);
    }
  });

  it("retries a platform that keeps failing with backoff, and stops after 5 attempts with the platform's message", async () => {
    const u = await userWithKey(api.db);
    const acc = await connect(u, 'lena');
    proxy.plan((req) =>
      req.path.endsWith('repo.putRecord') ? { kind: 'answer', status: 503, body: '{"error":"Unavailable","message":"Try later"}' } : undefined,
    );
    try {
      const id = await publishNow(api, u, { accountIds: [acc.id], caption: 'never' });
      const seen: [number, boolean][] = [];
      for (let round = 1; round <= 6; round += 1) {
        await api.publishing.drain();
        const error = (await postDetail(api, u, id)).targets[0]?.error;
        seen.push([error?.attempts ?? -1, error?.retrying ?? false]);
        // Past any backoff of that attempt (60 s doubling, capped at 120 s in these tests).
        api.publishing.runAhead(round * 130_000);
      }
      expect(seen).toEqual([
        [1, true],
        [2, true],
        [3, true],
        [4, true],
        [5, false],
        [5, false],
      ]);
      const post = await postDetail(api, u, id);
      expect(post.status).toBe('failed');
      expect(post.targets[0]?.error).toMatchObject({ category: 'platform_error', message: 'Try later', nextAttemptAt: null });
      expect(proxy.requests.filter((r) => r.path.endsWith('repo.putRecord') && r.status === 503)).toHaveLength(5);
    } finally {
      proxy.plan(() => undefined);
      api.publishing.runAhead(0);
    }
  });

  it('refreshes an expired access token, stores the new pair, and publishes', async () => {
    const u = await userWithKey(api.db);
    const acc = await connect(u, 'iris');
    const { row, stale } = await expireAccessToken(acc.id);

    const id = await publishNow(api, u, { accountIds: [acc.id], caption: 'fresh tokens' });
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).status).toBe('published');
    const after = await api.db
      .selectFrom('accounts')
      .select(['credentials', 'credentials_version', 'health'])
      .where('id', '=', acc.id)
      .executeTakeFirstOrThrow();
    expect(after.credentials_version).toBe(row.credentials_version + 1);
    expect(after.health).toBe('ok');
    const fresh = api.publishing.deps.vault.open<BlueskyCredentials>(after.credentials ?? '');
    expect(fresh.accessJwt).not.toBe(stale.accessJwt);
    expect(fresh.refreshJwt).not.toBe(stale.refreshJwt);
    expect(proxy.requests.filter((r) => r.path.endsWith('server.refreshSession'))).not.toHaveLength(0);
  });

  it('refreshes once when two publications of one account find its token expired at the same time', async () => {
    const u = await userWithKey(api.db);
    const acc = await connect(u, 'nina');
    const { row } = await expireAccessToken(acc.id);
    // Both posts' first writes are held at the PDS's door until both have arrived, so both meet the
    // expired token and both need a refresh; the PDS rotates the refresh token on every refresh.
    let bothArrived!: () => void;
    const arrived = new Promise<void>((resolve) => (bothArrived = resolve));
    let writes = 0;
    proxy.plan((req) => {
      if (!req.path.endsWith('repo.putRecord') || ++writes > 2) return undefined;
      if (writes === 2) bothArrived();
      return { kind: 'delay', until: Promise.race([arrived, new Promise<void>((resolve) => setTimeout(resolve, 10_000))]) };
    });
    const refreshesBefore = proxy.requests.filter((r) => r.path.endsWith('server.refreshSession')).length;
    try {
      const ids = [
        await publishNow(api, u, { accountIds: [acc.id], caption: 'first of two' }),
        await publishNow(api, u, { accountIds: [acc.id], caption: 'second of two' }),
      ];
      await api.publishing.drain(2);
      expect(writes).toBeGreaterThanOrEqual(2);
      for (const id of ids) expect((await postDetail(api, u, id)).status).toBe('published');
    } finally {
      proxy.plan(() => undefined);
    }
    expect(proxy.requests.filter((r) => r.path.endsWith('server.refreshSession')).length - refreshesBefore).toBe(1);
    const after = await api.db.selectFrom('accounts').select(['credentials_version', 'health']).where('id', '=', acc.id).executeTakeFirstOrThrow();
    expect(after).toEqual({ credentials_version: row.credentials_version + 1, health: 'ok' });
  });

  it('marks the account needs_reconnect when its session is revoked, and fails the target with auth_expired', async () => {
    const u = await userWithKey(api.db);
    const acc = await connect(u, 'jack');
    const row = await api.db.selectFrom('accounts').select('credentials').where('id', '=', acc.id).executeTakeFirstOrThrow();
    const tokens = api.publishing.deps.vault.open<BlueskyCredentials>(row.credentials ?? '');
    await pds.revokeSession(tokens.refreshJwt);
    await api.db
      .updateTable('accounts')
      .set({ credentials: api.publishing.deps.vault.seal({ ...tokens, accessJwt: pds.expiredAccessJwt(tokens.did) }) })
      .where('id', '=', acc.id)
      .execute();
    const id = await publishNow(api, u, { accountIds: [acc.id], caption: 'not going out' });
    await api.publishing.drain();
    const post = await postDetail(api, u, id);
    expect(post.status).toBe('failed');
    expect(post.targets[0]?.error).toMatchObject({ category: 'auth_expired', retrying: false, attempts: 1 });
    const listed = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key });
    expect(listed.body.data.find((a) => a.id === acc.id)).toMatchObject({ health: 'needs_reconnect', healthMessage: expect.any(String) as unknown });
    expect(await pds.listRecords(tokens.did)).toEqual([]);
  });
});

describe('a partial post', () => {
  it('retries only its failed target: the published one is not published again', async () => {
    const u = await userWithKey(api.db);
    const acc = await connect(u, 'mia');
    const sandbox = await api.request<Schemas['Account']>({ method: 'POST', url: '/api/v1/accounts', key: u.key, body: { platform: 'x', username: 'mia' } });
    proxy.plan((req) =>
      req.path.endsWith('repo.putRecord')
        ? { kind: 'answer', status: 400, body: '{"error":"InvalidRequest","message":"Record refused by the PDS"}' }
        : undefined,
    );
    try {
      const id = await publishNow(api, u, { accountIds: [sandbox.body.id, acc.id], caption: 'two places' });
      await api.publishing.drain();
      const partial = await postDetail(api, u, id);
      expect(partial.status).toBe('partial');
      expect(partial.targets.map((t) => [t.status, t.error?.category ?? null, t.error?.retrying ?? null])).toEqual([
        ['published', null, null],
        ['failed', 'user_content', false],
      ]);
      expect(partial.targets[1]?.error?.message).toBe('Record refused by the PDS');
      expect(await api.request({ method: 'DELETE', url: `/api/v1/posts/${id}`, key: u.key })).toMatchObject({
        status: 400,
        body: { error: 'Cannot delete published post' },
      });

      proxy.plan(() => undefined);
      const retried = await api.request<PostDetail>({ method: 'POST', url: `/api/v1/posts/${id}/retry`, key: u.key });
      expect(retried.status).toBe(202);
      expect(retried.body.targets.map((t) => t.status)).toEqual(['published', 'pending']);
      await api.publishing.drain();
      const post = await postDetail(api, u, id);
      expect(post.status).toBe('published');
      expect(post.targets[0]?.platformPostId).toBe(partial.targets[0]?.platformPostId);
      expect(await api.db.selectFrom('sandbox_outbox').select('platform_post_id').where('account_id', '=', sandbox.body.id).execute()).toHaveLength(1);
      expect(await pds.listRecords(await didOf(acc.id))).toHaveLength(1);
    } finally {
      proxy.plan(() => undefined);
    }
  });
});

describe('after an outage', () => {
  it('spaces the posts of one account instead of bursting them', async () => {
    const u = await userWithKey(api.db);
    const acc = await connect(u, 'noah');
    const spacing = 400;
    api.publishing.deps.settings.liveSpacingMs = spacing;
    try {
      for (const caption of ['first', 'second', 'third']) {
        const created = await api.request<{ id: string }>({
          method: 'POST',
          url: '/api/v1/posts',
          key: u.key,
          body: { accountIds: [acc.id], caption, scheduledAt: new Date(Date.now() + 60_000).toISOString() },
        });
        expect(created.status).toBe(201);
      }
      // All three came due while no worker ran; the worker comes back five minutes later.
      api.publishing.runAhead(5 * 60_000);
      await api.publishing.drain(3);
      const records = await pds.listRecords(await didOf(acc.id));
      const times = records.map((r) => Date.parse((r.value as { createdAt: string }).createdAt)).sort((a, b) => a - b);
      expect(times).toHaveLength(3);
      expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(spacing);
      expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(spacing);
    } finally {
      api.publishing.deps.settings.liveSpacingMs = 0;
      api.publishing.runAhead(0);
    }
  });
});

describe('while a call to Bluesky is in flight', () => {
  it('refuses to edit or delete the post, lets the account be disconnected, and records the outcome', async () => {
    const u = await userWithKey(api.db);
    const acc = await connect(u, 'liam');
    let release = (): void => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    proxy.plan((req) => (req.path.endsWith('repo.putRecord') ? { kind: 'delay', until: held } : undefined));
    try {
      const id = await publishNow(api, u, { accountIds: [acc.id], caption: 'in flight' });
      const later = await api.request<{ id: string }>({ method: 'POST', url: '/api/v1/posts', key: u.key, body: { accountIds: [acc.id], caption: 'next' } });
      const draining = api.publishing.drain();
      for (const until = Date.now() + 10_000; (await postDetail(api, u, id)).targets[0]?.status !== 'publishing' && Date.now() < until;) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect((await postDetail(api, u, id)).status).toBe('publishing');
      expect(await api.request({ method: 'PATCH', url: `/api/v1/posts/${id}`, key: u.key, body: { caption: 'changed' } })).toMatchObject({
        status: 400,
        body: { error: 'Cannot edit a post while it is publishing' },
      });
      expect(await api.request({ method: 'DELETE', url: `/api/v1/posts/${id}`, key: u.key })).toMatchObject({
        status: 400,
        body: { error: 'Cannot delete a post while it is publishing' },
      });
      expect(await api.request({ method: 'DELETE', url: `/api/v1/accounts/${acc.id}`, key: u.key })).toMatchObject({ status: 200 });
      release();
      await draining;

      const post = await postDetail(api, u, id);
      expect(post).toMatchObject({ status: 'published', caption: 'in flight' });
      const records = await pds.listRecords(await didOf(acc.id));
      expect(records.map((r) => r.uri)).toEqual([post.targets[0]?.platformPostId]);
      // The account is gone now: a post that targets it cannot be published.
      expect(await api.request({ method: 'POST', url: `/api/v1/posts/${later.body.id}/publish`, key: u.key })).toMatchObject({ status: 202 });
      await api.publishing.drain();
      expect((await postDetail(api, u, later.body.id)).targets[0]).toMatchObject({
        status: 'failed',
        error: { category: 'auth_expired', message: 'The account was disconnected before this post was published' },
      });
      expect(await pds.listRecords(await didOf(acc.id))).toHaveLength(1);
    } finally {
      release();
      proxy.plan(() => undefined);
    }
  });
});
