import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { SPEC_PATH } from '../../src/api/contract/specification.js';
import { connectAccount } from '../../src/domain/accounts.js';
import { newId } from '../../src/domain/ids.js';
import { addMember, createOrganization } from '../../src/domain/users.js';
import { useTestApi, type ApiRequest, type Schemas } from '../support/api.js';
import { account, media, userWithKey, type TestUser } from '../support/fixtures.js';

/**
 * Isolation, generated from the spec: every operation that takes a key is tried by one user on the
 * other's resources (posts, accounts, media, webhooks and their deliveries), and by the outsider on
 * the organization's account. The answer must be exactly the answer for an id that does not exist
 * (so it reveals nothing), and nothing of the owner's may change. An operation of the spec missing
 * from the table below fails the test, so a new operation cannot escape it.
 */
// An X app, so that each party can start a connection (starting one calls nothing).
const api = useTestApi({ env: () => ({ HERALD_X_CLIENT_ID: 'isolation-app', HERALD_X_CLIENT_SECRET: 'isolation-secret' }) });

interface Resources {
  post: string;
  account: string;
  media: string;
  webhook: string;
  connection: string;
}

interface Party extends TestUser, Resources {}

/** How each operation can reach someone else's resources: requests naming them, or a listing that must not show them. */
type Probe =
  | { kind: 'requests'; build: (caller: Party, target: Resources) => ApiRequest[] }
  | { kind: 'listing'; url: string; field: keyof Resources }
  | { kind: 'own-only'; why: string };

const withKey = (caller: Party, req: Omit<ApiRequest, 'key'>): ApiRequest => ({ ...req, key: caller.key });

const PROBES: Record<string, Probe> = {
  createPost: {
    kind: 'requests',
    build: (c, t) => [
      withKey(c, { method: 'POST', url: '/api/v1/posts', body: { accountIds: [t.account], caption: 'x' } }),
      withKey(c, { method: 'POST', url: '/api/v1/posts', body: { accountIds: [c.account], mediaIds: [t.media], caption: 'x' } }),
    ],
  },
  validatePost: {
    kind: 'requests',
    build: (c, t) => [
      withKey(c, { method: 'POST', url: '/api/v1/posts/validate', body: { accountIds: [t.account], caption: 'x' } }),
      withKey(c, { method: 'POST', url: '/api/v1/posts/validate', body: { accountIds: [c.account], mediaIds: [t.media], caption: 'x' } }),
    ],
  },
  getPost: { kind: 'requests', build: (c, t) => [withKey(c, { method: 'GET', url: `/api/v1/posts/${t.post}` })] },
  updatePost: {
    kind: 'requests',
    build: (c, t) => [
      withKey(c, { method: 'PATCH', url: `/api/v1/posts/${t.post}`, body: { caption: 'taken over' } }),
      withKey(c, { method: 'PATCH', url: `/api/v1/posts/${c.post}`, body: { accountIds: [t.account] } }),
      withKey(c, { method: 'PATCH', url: `/api/v1/posts/${c.post}`, body: { mediaIds: [t.media] } }),
    ],
  },
  deletePost: { kind: 'requests', build: (c, t) => [withKey(c, { method: 'DELETE', url: `/api/v1/posts/${t.post}` })] },
  publishPost: { kind: 'requests', build: (c, t) => [withKey(c, { method: 'POST', url: `/api/v1/posts/${t.post}/publish` })] },
  retryPost: { kind: 'requests', build: (c, t) => [withKey(c, { method: 'POST', url: `/api/v1/posts/${t.post}/retry` })] },
  listPosts: { kind: 'listing', url: '/api/v1/posts?limit=100', field: 'post' },
  listAccounts: { kind: 'listing', url: '/api/v1/accounts', field: 'account' },
  connectAccount: { kind: 'own-only', why: 'connects an account for the caller; its body names no existing resource' },
  disconnectAccount: { kind: 'requests', build: (c, t) => [withKey(c, { method: 'DELETE', url: `/api/v1/accounts/${t.account}` })] },
  uploadMedia: { kind: 'own-only', why: 'stores a file for the caller; its body names no existing resource' },
  listMedia: { kind: 'listing', url: '/api/v1/media?limit=100', field: 'media' },
  deleteMedia: { kind: 'requests', build: (c, t) => [withKey(c, { method: 'DELETE', url: `/api/v1/media/${t.media}` })] },
  listPlatforms: { kind: 'own-only', why: 'the same platform table for everyone' },
  listWebhooks: { kind: 'listing', url: '/api/v1/webhooks', field: 'webhook' },
  createWebhook: { kind: 'own-only', why: 'registers an endpoint for the caller; its body names no existing resource' },
  getWebhook: { kind: 'requests', build: (c, t) => [withKey(c, { method: 'GET', url: `/api/v1/webhooks/${t.webhook}` })] },
  updateWebhook: { kind: 'requests', build: (c, t) => [withKey(c, { method: 'PATCH', url: `/api/v1/webhooks/${t.webhook}`, body: { enabled: false } })] },
  deleteWebhook: { kind: 'requests', build: (c, t) => [withKey(c, { method: 'DELETE', url: `/api/v1/webhooks/${t.webhook}` })] },
  rotateWebhookSecret: { kind: 'requests', build: (c, t) => [withKey(c, { method: 'POST', url: `/api/v1/webhooks/${t.webhook}/rotate-secret` })] },
  testWebhook: { kind: 'requests', build: (c, t) => [withKey(c, { method: 'POST', url: `/api/v1/webhooks/${t.webhook}/test` })] },
  listWebhookDeliveries: { kind: 'requests', build: (c, t) => [withKey(c, { method: 'GET', url: `/api/v1/webhooks/${t.webhook}/deliveries` })] },
  startConnection: { kind: 'own-only', why: 'starts a connection for the caller; its body names no existing resource' },
  getConnection: { kind: 'requests', build: (c, t) => [withKey(c, { method: 'GET', url: `/api/v1/connections/${t.connection}` })] },
};

type Operation = { operationId: string; security?: unknown[] };
const spec = parse(readFileSync(SPEC_PATH, 'utf8')) as { paths: Record<string, Record<string, Operation>>; security?: unknown[] };
const keyed = Object.values(spec.paths)
  .flatMap((item) => Object.values(item))
  .filter((op) => (op.security ?? spec.security ?? []).length > 0)
  .map((op) => op.operationId);

/** Ids of the right form that exist nowhere: what every foreign id must be indistinguishable from. */
const ghosts: Resources = { post: newId('post'), account: newId('acc'), media: newId('med'), webhook: newId('whk'), connection: newId('conn') };
/** Ids of every other form: another type's prefix, too short, a path trick, non-ASCII. */
const malformed = ['post_0', 'acc_../../x', 'med_ÄÖÜ', `whk_${'z'.repeat(300)}`, 'usr_0000000000000000000000000'];

let ada: Party;
let bob: Party;
/** The organization's account: Ada is a member, Bob is not. */
let orgAccount: string;

async function party(name: string): Promise<Party> {
  const user = await userWithKey(api.db, name);
  const acc = await account(api.db, user.userId, 'x', name);
  const med = await media(api.db, user.userId);
  const post = await api.request<Schemas['PostCreateResult']>({
    method: 'POST',
    url: '/api/v1/posts',
    key: user.key,
    body: { accountIds: [acc], caption: `${name}'s draft`, mediaIds: [med] },
  });
  const webhook = await api.request<Schemas['WebhookWithSecret']>({
    method: 'POST',
    url: '/api/v1/webhooks',
    key: user.key,
    body: { url: 'http://127.0.0.1:9/hook', eventTypes: ['post.published'] },
  });
  // A delivery of its own, so that the deliveries listing has something to hide.
  expect((await api.request({ method: 'POST', url: `/api/v1/webhooks/${webhook.body.id}/test`, key: user.key })).status).toBe(202);
  const connection = await api.request<Schemas['Connection']>({ method: 'POST', url: '/api/v1/connections', key: user.key, body: { platform: 'x' } });
  expect(connection.status).toBe(201);
  return { ...user, account: acc, media: med, post: post.body.id, webhook: webhook.body.id, connection: connection.body.id };
}

/** Everything of one user's, as stored: compared before and after the probes. */
async function holdings(userId: string) {
  const db = api.db;
  return {
    posts: await db.selectFrom('posts').selectAll().where('user_id', '=', userId).orderBy('id').execute(),
    targets: await db
      .selectFrom('post_targets')
      .innerJoin('posts', 'posts.id', 'post_targets.post_id')
      .selectAll('post_targets')
      .where('posts.user_id', '=', userId)
      .orderBy('post_targets.post_id')
      .execute(),
    accounts: await db.selectFrom('accounts').selectAll().where('owner_user_id', '=', userId).orderBy('id').execute(),
    media: await db.selectFrom('media_assets').selectAll().where('owner_user_id', '=', userId).orderBy('id').execute(),
    webhooks: await db.selectFrom('webhook_endpoints').selectAll().where('user_id', '=', userId).orderBy('id').execute(),
    connections: await db.selectFrom('connections').selectAll().where('user_id', '=', userId).orderBy('id').execute(),
  };
}

beforeAll(async () => {
  ada = await party('ada');
  bob = await party('bob');
  const { id: orgId } = await createOrganization(api.db, 'Acme');
  await addMember(api.db, orgId, ada.userId);
  orgAccount = (await connectAccount(api.db, { platform: 'linkedin', username: 'acme', displayName: null, owner: { orgId } })).id;
});

/** The same request with every id of `from` replaced by its counterpart in `to`. */
function swapIds(req: ApiRequest, from: Resources, to: Resources): ApiRequest {
  let text = JSON.stringify(req);
  for (const field of Object.keys(from) as (keyof Resources)[]) text = text.split(from[field]).join(to[field]);
  return JSON.parse(text) as ApiRequest;
}

describe('isolation between users and organizations, for every operation of the spec', () => {
  it('has a probe for every operation that takes a key, and nothing else', () => {
    expect(Object.keys(PROBES).sort()).toEqual([...keyed].sort());
  });

  it("answers one user's requests on another's resources exactly as for ids that do not exist, and changes nothing", async () => {
    const before = { ada: await holdings(ada.userId), bob: await holdings(bob.userId) };
    let probes = 0;
    for (const [caller, owner] of [
      [ada, bob],
      [bob, ada],
    ] as const) {
      // Bob is not in Ada's organization: its account is as foreign to him as Ada's own.
      const targets: Resources[] = caller === bob ? [owner, { ...owner, account: orgAccount }] : [owner];
      for (const target of targets) {
        for (const [operationId, probe] of Object.entries(PROBES)) {
          if (probe.kind !== 'requests') continue;
          for (const req of probe.build(caller, target)) {
            const foreign = await api.request<{ error: string }>(req);
            const ghost = await api.request<{ error: string }>(swapIds(req, target, ghosts));
            probes += 2;
            expect([404, 403], `${operationId} ${req.method} ${req.url}`).toContain(foreign.status);
            // Same status, and the same message but for the id it names.
            expect({ status: foreign.status, body: swapIds(foreign.body as never, target, ghosts) }, `${operationId} ${req.method} ${req.url}`).toEqual({
              status: ghost.status,
              body: ghost.body,
            });
          }
        }
      }
    }
    expect({ ada: await holdings(ada.userId), bob: await holdings(bob.userId) }).toEqual(before);
    expect(probes).toBeGreaterThanOrEqual(60);
  });

  it('answers ids of any other form as not found (or not accessible, for ids in a body), and changes nothing', async () => {
    const before = await holdings(bob.userId);
    for (const id of malformed) {
      const odd: Resources = { post: id, account: id, media: id, webhook: id, connection: id };
      for (const [operationId, probe] of Object.entries(PROBES)) {
        if (probe.kind !== 'requests') continue;
        for (const req of probe.build(ada, odd)) {
          const res = await api.request<{ error: string }>(req);
          expect([404, 403, 400], `${operationId} ${req.method} ${req.url}`).toContain(res.status);
          // It may name the id it was sent, and nothing of anybody's.
          const said = JSON.stringify(res.body);
          for (const secret of [bob.userId, bob.post, bob.account, bob.media, bob.webhook, bob.connection, orgAccount, 'bob'])
            expect(said).not.toContain(secret);
        }
      }
    }
    expect(await holdings(bob.userId)).toEqual(before);
  });

  it("never lists another user's resources, and lists the organization's account to its member only", async () => {
    for (const [caller, owner] of [
      [ada, bob],
      [bob, ada],
    ] as const) {
      for (const [operationId, probe] of Object.entries(PROBES)) {
        if (probe.kind !== 'listing') continue;
        const res = await api.request<{ data: { id: string }[] }>({ method: 'GET', url: probe.url, key: caller.key });
        const ids = res.body.data.map((item) => item.id);
        expect(ids, operationId).toContain(caller[probe.field]);
        expect(ids, operationId).not.toContain(owner[probe.field]);
      }
    }
    const adaAccounts = await api.request<{ data: { id: string }[] }>({ method: 'GET', url: '/api/v1/accounts', key: ada.key });
    const bobAccounts = await api.request<{ data: { id: string }[] }>({ method: 'GET', url: '/api/v1/accounts', key: bob.key });
    expect(adaAccounts.body.data.map((a) => a.id)).toContain(orgAccount);
    expect(bobAccounts.body.data.map((a) => a.id)).not.toContain(orgAccount);
    // A member may post to the organization's account: the matrix's refusals are about ownership, not the operation.
    const shared = await api.request({ method: 'POST', url: '/api/v1/posts', key: ada.key, body: { accountIds: [orgAccount], caption: 'For Acme' } });
    expect(shared.status).toBe(201);
  });
});
