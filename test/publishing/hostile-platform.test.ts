import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApi, type Schemas } from '../support/api.js';
import { userWithKey, type TestUser } from '../support/fixtures.js';
import { startMastodonFake, type MastodonFake } from '../support/mastodon-fake.js';
import { postDetail, publishNow } from '../support/posts.js';

// A Mastodon "instance" the caller controls: its answers are what an attacker chooses. Herald
// reads at most 2 MiB of any answer (after decompression), and stores only profile fields it can.
const api = useTestApi();

/** 64 MiB of JSON once inflated, about 64 KiB on the wire: what an instance could send to exhaust memory. */
const BOMB_BYTES = 64 * 1024 * 1024;
const bomb = gzipSync(Buffer.concat([Buffer.from('{"id":"1","acct":"x","display_name":"'), Buffer.alloc(BOMB_BYTES, 'a'), Buffer.from('"}')]), { level: 1 });

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let hostile: Server;
let hostileUrl: string;
const routes = new Map<string, Handler>();

beforeAll(async () => {
  hostile = createServer((req, res) => {
    const handler = routes.get(`${req.method} ${req.url?.split('?')[0]}`);
    if (handler === undefined) return res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Record not found"}');
    handler(req, res);
  });
  await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
  const address = hostile.address();
  hostileUrl = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
});
afterAll(async () => {
  hostile.closeAllConnections();
  await new Promise((resolve) => hostile.close(resolve));
});

function json(body: unknown): Handler {
  return (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function gzipBomb(): Handler {
  return (req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(bomb.length) });
    res.end(bomb);
  };
}

async function connectHostile(u: TestUser): Promise<{ status: number; body: Schemas['Account'] & { error?: string } }> {
  return api.request({
    method: 'POST',
    url: '/api/v1/accounts',
    key: u.key,
    body: { platform: 'mastodon', credentials: { instance: hostileUrl, accessToken: 'token' } },
  });
}

async function accountsOf(u: TestUser): Promise<Schemas['Account'][]> {
  return (await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key })).body.data;
}

describe('an instance that answers more than Herald reads', () => {
  it('connect: a gzip answer inflating to 64 MiB is cut off at 2 MiB, answered 502, and nothing is stored', async () => {
    routes.set('GET /api/v1/accounts/verify_credentials', gzipBomb());
    const u = await userWithKey(api.db);
    const res = await connectHostile(u);
    expect(res.status).toBe(502);
    expect(res.body.error).toBe(`Platform error: ${new URL(hostileUrl).host} sent an answer larger than 2 MiB`);
    expect(await accountsOf(u)).toEqual([]);
    expect(await api.db.selectFrom('accounts').select('id').where('owner_user_id', '=', u.userId).execute()).toEqual([]);
  });

  it('connect to Bluesky: a session answered with a gzip bomb is cut off the same way', async () => {
    routes.set('POST /xrpc/com.atproto.server.createSession', gzipBomb());
    const u = await userWithKey(api.db);
    const res = await api.request<{ error: string }>({
      method: 'POST',
      url: '/api/v1/accounts',
      key: u.key,
      body: { platform: 'bluesky', credentials: { service: hostileUrl, identifier: 'ada.test', appPassword: 'aaaa-bbbb-cccc-dddd' } },
    });
    expect(res).toMatchObject({ status: 502, body: { error: `Platform error: ${new URL(hostileUrl).host} sent an answer larger than 2 MiB` } });
    expect(await accountsOf(u)).toEqual([]);
  });

  it('connect to Bluesky: a session whose tokens are over the 32 KiB credentials limit is refused with credentials_too_large, and nothing is stored', async () => {
    const jwt = 'a'.repeat(256 * 1024);
    routes.set('POST /xrpc/com.atproto.server.createSession', json({ did: 'did:plc:hostile', handle: 'ada.test', accessJwt: jwt, refreshJwt: jwt }));
    const u = await userWithKey(api.db);
    const res = await api.request<{ error: string; code: string }>({
      method: 'POST',
      url: '/api/v1/accounts',
      key: u.key,
      body: { platform: 'bluesky', credentials: { service: hostileUrl, identifier: 'ada.test', appPassword: 'aaaa-bbbb-cccc-dddd' } },
    });
    expect(res).toMatchObject({
      status: 502,
      body: { code: 'credentials_too_large', error: 'Platform error: Bluesky answered credentials larger than 32 KiB, which Herald does not store' },
    });
    expect(await accountsOf(u)).toEqual([]);
    expect(await api.db.selectFrom('accounts').select('id').where('owner_user_id', '=', u.userId).execute()).toEqual([]);
  });

  it('publish: a status answered with a gzip bomb fails the target platform_error, in doubt and retried, without reading it whole', async () => {
    routes.set('GET /api/v1/accounts/verify_credentials', json({ id: '7', acct: 'ada', display_name: 'Ada' }));
    const u = await userWithKey(api.db);
    const connected = await connectHostile(u);
    expect(connected.status).toBe(201);
    routes.set('POST /api/v1/statuses', gzipBomb());
    const id = await publishNow(api, u, { accountIds: [connected.body.id], caption: 'Hello' });
    await api.publishing.drain();
    const target = (await postDetail(api, u, id)).targets[0];
    expect(target?.error).toMatchObject({
      category: 'platform_error',
      retrying: true,
      message: `${new URL(hostileUrl).host} sent an answer larger than 2 MiB`,
    });
  });
});

describe('profile fields an instance answers', () => {
  it.each([
    [
      'a display name that is an object',
      { id: '8', acct: 'bob', display_name: { toString: 'x' } },
      'Platform error: 127.0.0.1:PORT answered an account Herald cannot read (id, acct and display_name must be text)',
    ],
    [
      'an id that is a number',
      { id: 8, acct: 'bob', display_name: 'Bob' },
      'Platform error: 127.0.0.1:PORT answered an account Herald cannot read (id, acct and display_name must be text)',
    ],
    [
      'a NUL in acct',
      { id: '8', acct: 'bo\u0000b', display_name: 'Bob' },
      'Platform error: mastodon answered a profile Herald cannot store: username contains NUL or an unpaired surrogate',
    ],
    [
      'a display name of 300 characters',
      { id: '8', acct: 'bob', display_name: 'b'.repeat(300) },
      'Platform error: mastodon answered a profile Herald cannot store: displayName is longer than 256 characters',
    ],
    [
      'an acct of 600 characters',
      { id: '8', acct: 'b'.repeat(600), display_name: 'Bob' },
      'Platform error: mastodon answered a profile Herald cannot store: username is longer than 512 characters',
    ],
  ])('%s is a 502 naming the problem, and no account is stored', async (_name, profile, error) => {
    routes.set('GET /api/v1/accounts/verify_credentials', json(profile));
    const u = await userWithKey(api.db);
    const res = await connectHostile(u);
    expect(res).toMatchObject({ status: 502, body: { error: error.replace('127.0.0.1:PORT', new URL(hostileUrl).host) } });
    expect(await accountsOf(u)).toEqual([]);
  });
});

describe('two Mastodon instances that number their accounts alike', () => {
  const fakes: MastodonFake[] = [];
  /** Two new instances: the first account each one makes is its account 1. */
  async function twoInstances(): Promise<[MastodonFake, MastodonFake]> {
    const pair = await Promise.all([startMastodonFake(), startMastodonFake()]);
    fakes.push(...pair);
    return pair;
  }
  afterAll(async () => {
    await Promise.all(fakes.map((fake) => fake.close()));
  });

  const connect = async (u: TestUser, instance: MastodonFake, token: string) =>
    api.request<Schemas['Account']>({
      method: 'POST',
      url: '/api/v1/accounts',
      key: u.key,
      body: { platform: 'mastodon', credentials: { instance: instance.url, accessToken: token } },
    });

  it('are two accounts, and a post for the first instance is published there only', async () => {
    const [first, second] = await twoInstances();
    const u = await userWithKey(api.db);
    const ada = first.addAccount('ada', 'Ada on the first');
    const bea = second.addAccount('bea', 'Bea on the second');
    expect(ada.id).toBe(bea.id);
    const a = await connect(u, first, ada.token);
    const b = await connect(u, second, bea.token);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.body.id).not.toBe(a.body.id);
    expect((await accountsOf(u)).map((x) => [x.username, x.displayName])).toEqual([
      ['ada', 'Ada on the first'],
      ['bea', 'Bea on the second'],
    ]);

    const id = await publishNow(api, u, { accountIds: [a.body.id], caption: 'For the first instance' });
    await api.publishing.drain();
    expect((await postDetail(api, u, id)).status).toBe('published');
    expect(first.statuses.map((s) => s.text)).toEqual(['For the first instance']);
    expect(second.statuses).toEqual([]);

    // Reconnecting either one updates that one in place.
    expect(await connect(u, first, ada.token)).toMatchObject({ status: 201, body: { id: a.body.id, displayName: 'Ada on the first' } });
    expect(await connect(u, second, bea.token)).toMatchObject({ status: 201, body: { id: b.body.id, displayName: 'Bea on the second' } });
  });

  it('an account stored by an earlier version under the bare id is matched on its own instance only', async () => {
    const [first, second] = await twoInstances();
    const u = await userWithKey(api.db);
    const cat = first.addAccount('cat', 'Cat');
    const dan = second.addAccount('dan', 'Dan');
    const stored = await connect(u, first, cat.token);
    expect(stored.status).toBe(201);
    // What earlier versions stored: the instance-local id alone.
    await api.db.updateTable('accounts').set({ platform_user_id: cat.id }).where('id', '=', stored.body.id).execute();
    const platformUserId = async () =>
      (await api.db.selectFrom('accounts').select('platform_user_id').where('id', '=', stored.body.id).executeTakeFirstOrThrow()).platform_user_id;

    const other = await connect(u, second, dan.token);
    expect(other.status).toBe(201);
    expect(other.body.id).not.toBe(stored.body.id);
    expect(await platformUserId()).toBe(cat.id);

    expect(await connect(u, first, cat.token)).toMatchObject({ status: 201, body: { id: stored.body.id } });
    expect(await platformUserId()).toBe(`${cat.id}@${first.url}`);
    expect((await accountsOf(u)).map((x) => x.username)).toEqual(['cat', 'dan']);
  });
});
