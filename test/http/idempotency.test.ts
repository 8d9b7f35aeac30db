import { readdir } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claimIdempotencyKey, purgeExpiredIdempotencyKeys, releaseIdempotencyKey } from '../../src/domain/idempotency.js';
import { buildApp } from '../../src/api/app.js';
import { injectChecked, useTestApi, type InvalidRequest, type Schemas } from '../support/api.js';
import { fetchChecked } from '../support/fetch-checked.js';
import { account, inOneHour, postCount, userWithKey, type TestUser } from '../support/fixtures.js';
import { multipartBody } from '../support/media-files.js';
import { solidPng } from '../support/png.js';
import { useDemoServer } from '../support/server.js';

const api = useTestApi();
const running = useDemoServer();

function create(u: TestUser, key: string, body: unknown, raw?: string) {
  return api.request<Schemas['PostDetail'] & { error?: string }>({
    method: 'POST',
    url: '/api/v1/posts',
    key: u.key,
    headers: { 'idempotency-key': key, ...(raw === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(raw === undefined ? { body } : { payload: raw }),
  });
}

describe('Idempotency-Key', () => {
  it('answers a repeated request with the first answer, marked as a replay, and does the work once', async () => {
    const u = await userWithKey(api.db);
    const acc = await account(api.db, u.userId);
    const first = await create(u, 'key-1', { accountIds: [acc], caption: 'Once', postType: 'post' });
    expect(first.status).toBe(201);
    expect(first.headers['idempotency-replayed']).toBeUndefined();
    // The same JSON value, spelled differently: keys reordered, other spacing.
    const again = await create(u, 'key-1', undefined, `{ "postType": "post",  "caption": "Once", "accountIds": ["${acc}"] }`);
    expect(again.status).toBe(201);
    expect(again.headers['idempotency-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await postCount(api.db, u.userId)).toBe(1);
  });

  it('refuses the same key with a different request (422) and does nothing', async () => {
    const u = await userWithKey(api.db);
    const acc = await account(api.db, u.userId);
    expect((await create(u, 'key-2', { accountIds: [acc], caption: 'First' })).status).toBe(201);
    const other = await create(u, 'key-2', { accountIds: [acc], caption: 'Second' });
    expect(other.status).toBe(422);
    expect(other.body).toEqual({ error: 'Idempotency-Key reused with a different request: use a new key for a new request', code: 'idempotency_key_reused' });
    expect(await postCount(api.db, u.userId)).toBe(1);
    // Another path with the same key is another request too.
    const posts = await api.db.selectFrom('posts').select('id').where('user_id', '=', u.userId).execute();
    const publish = await api.request({ method: 'POST', url: `/api/v1/posts/${posts[0]?.id}/publish`, key: u.key, headers: { 'idempotency-key': 'key-2' } });
    expect(publish.status).toBe(202);
  });

  it('scopes keys to the caller: another user with the same key does their own work', async () => {
    const ada = await userWithKey(api.db);
    const bob = await userWithKey(api.db);
    const adaPost = await create(ada, 'shared', { accountIds: [await account(api.db, ada.userId)], caption: 'Ada' });
    const bobPost = await create(bob, 'shared', { accountIds: [await account(api.db, bob.userId)], caption: 'Bob' });
    expect([adaPost.status, bobPost.status]).toEqual([201, 201]);
    expect(bobPost.headers['idempotency-replayed']).toBeUndefined();
    expect(bobPost.body.id).not.toBe(adaPost.body.id);
  });

  it('does the work once for two requests at the same time: the other waits its turn (409) or gets the answer', async () => {
    const u = await userWithKey(api.db);
    const acc = await account(api.db, u.userId);
    const body = { accountIds: [acc], caption: 'Racing' };
    const answers = await Promise.all([create(u, 'race', body), create(u, 'race', body), create(u, 'race', body)]);
    expect(await postCount(api.db, u.userId)).toBe(1);
    const created = answers.filter((a) => a.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((a) => a.body.id)).size).toBe(1);
    for (const a of answers.filter((x) => x.status !== 201)) {
      expect(a.status).toBe(409);
      expect(a.body).toEqual({ error: 'A request with this Idempotency-Key is still in progress', code: 'idempotency_in_progress' });
      expect(Number(a.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    const later = await create(u, 'race', body);
    expect(later.headers['idempotency-replayed']).toBe('true');
    expect(later.body.id).toBe(created[0]?.body.id);
  });

  it('keeps no key for a request refused by validation, and keeps an answer the operation gave', async () => {
    const u = await userWithKey(api.db);
    const acc = await account(api.db, u.userId);
    const invalid = await api.request<InvalidRequest>({
      method: 'POST',
      url: '/api/v1/posts',
      key: u.key,
      headers: { 'idempotency-key': 'k' },
      body: { caption: 'no accounts' },
    });
    expect(invalid.status).toBe(400);
    expect((await create(u, 'k', { accountIds: [acc], caption: 'Now valid' })).status).toBe(201);

    const id = (await create(u, 'k2', { accountIds: [acc], caption: 'To publish' })).body.id;
    const publish = () =>
      api.request<{ error?: string }>({ method: 'POST', url: `/api/v1/posts/${id}/publish`, key: u.key, headers: { 'idempotency-key': 'pub' } });
    expect((await publish()).status).toBe(202);
    const replayed = await publish();
    expect(replayed.status).toBe(202);
    expect(replayed.headers['idempotency-replayed']).toBe('true');
    // Without the key, the same call is a new request, refused as the post is no longer a draft.
    const fresh = await api.request<{ error: string }>({ method: 'POST', url: `/api/v1/posts/${id}/publish`, key: u.key });
    expect(fresh.status).toBe(400);
  });

  it('refuses a malformed key with a 400 naming the header', async () => {
    const u = await userWithKey(api.db);
    for (const key of ['has space', 'x'.repeat(256), 'é']) {
      const res = await api.request<InvalidRequest>({
        method: 'POST',
        url: '/api/v1/posts',
        key: u.key,
        headers: { 'idempotency-key': key },
        body: { accountIds: [await account(api.db, u.userId)], caption: 'x' },
      });
      expect([key, res.status]).toEqual([key, 400]);
      expect(res.body.details.map((d) => d.path)).toEqual([['idempotency-key']]);
    }
    expect(await postCount(api.db, u.userId)).toBe(0);
  });

  it('forgets a key after 24 hours, and the maintenance purge deletes it', async () => {
    const u = await userWithKey(api.db);
    const acc = await account(api.db, u.userId);
    expect((await create(u, 'old', { accountIds: [acc], caption: 'Yesterday' })).status).toBe(201);
    await api.db
      .updateTable('idempotency_keys')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('user_id', '=', u.userId)
      .execute();
    const again = await create(u, 'old', { accountIds: [acc], caption: 'Today' });
    expect(again.status).toBe(201);
    expect(again.headers['idempotency-replayed']).toBeUndefined();
    expect(await postCount(api.db, u.userId)).toBe(2);

    await api.db
      .updateTable('idempotency_keys')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('user_id', '=', u.userId)
      .execute();
    expect(await purgeExpiredIdempotencyKeys(api.db, new Date())).toBeGreaterThanOrEqual(1);
    expect(await api.db.selectFrom('idempotency_keys').select('key').where('user_id', '=', u.userId).execute()).toEqual([]);
  });

  it('frees a released key (a 5xx answer) and takes over one whose holder is gone', async () => {
    const u = await userWithKey(api.db);
    const scope = { userId: u.userId, operationId: 'createPost', key: 'held' };
    const { vault } = api.publishing.serviceDeps;
    const now = new Date();
    expect(await claimIdempotencyKey(api.db, scope, 'claim-1', 'f', now, vault)).toEqual({ kind: 'claimed' });
    expect(await claimIdempotencyKey(api.db, scope, 'claim-1', 'f', now, vault)).toEqual({ kind: 'in_progress', retryAfterSeconds: 60 });
    // Only the claim that holds the key frees it.
    await releaseIdempotencyKey(api.db, scope, 'someone-else');
    expect(await claimIdempotencyKey(api.db, scope, 'claim-1', 'f', now, vault)).toEqual({ kind: 'in_progress', retryAfterSeconds: 60 });
    await releaseIdempotencyKey(api.db, scope, 'claim-1');
    expect(await claimIdempotencyKey(api.db, scope, 'claim-1', 'f', now, vault)).toEqual({ kind: 'claimed' });
    // A minute later its holder is taken as gone: the same request may take the key.
    expect(await claimIdempotencyKey(api.db, scope, 'claim-1', 'f', new Date(now.getTime() + 61_000), vault)).toEqual({ kind: 'claimed' });
    expect(await claimIdempotencyKey(api.db, scope, 'claim-2', 'other', new Date(now.getTime() + 61_000), vault)).toEqual({ kind: 'mismatch' });
  });
});

describe('a request its operation refuses as invalid (400 Invalid request)', () => {
  it('keeps no key for a past scheduledAt or an invalid reference: the same key then does the valid request', async () => {
    const u = await userWithKey(api.db);
    const acc = await account(api.db, u.userId);
    const refused: [string, object][] = [
      ['past', { accountIds: [acc], caption: 'Too late', scheduledAt: '2020-01-01T00:00:00Z' }],
      ['reference', { accountIds: [acc], caption: 'Whose?', accountOverrides: [{ accountId: 'acc_notatarget', captionOverride: 'x' }] }],
    ];
    for (const [key, body] of refused) {
      const res = await create(u, key, body);
      expect([key, res.status, res.body.error]).toEqual([key, 400, 'Invalid request']);
      const valid = await create(u, key, { accountIds: [acc], caption: `Valid after ${key}`, scheduledAt: inOneHour() });
      expect([key, valid.status, valid.headers['idempotency-replayed']]).toEqual([key, 201, undefined]);
      const saved = await api.request<Schemas['PostDetail']>({ method: 'GET', url: `/api/v1/posts/${valid.body.id}`, key: u.key });
      expect(saved.body.caption).toBe(`Valid after ${key}`);
    }
    expect(await postCount(api.db, u.userId)).toBe(2);
  });

  it('keeps no key for an upload whose form is refused: the same key then stores the valid upload', async () => {
    const u = await userWithKey(api.db);
    const upload = (parts: Parameters<typeof multipartBody>[0]) => {
      const { payload, contentType } = multipartBody(parts);
      return api.request<Schemas['Media'] & { error?: string }>({
        method: 'POST',
        url: '/api/v1/media',
        key: u.key,
        payload,
        headers: { 'content-type': contentType, 'idempotency-key': 'form' },
      });
    };
    const untyped = await api.request<{ error: string }>({
      method: 'POST',
      url: '/api/v1/media',
      key: u.key,
      payload: solidPng(4, 4),
      headers: { 'idempotency-key': 'form' },
    });
    expect(untyped.status).toBe(415);
    const noFile = await upload([{ name: 'altText', value: 'A picture, not attached' }]);
    expect([noFile.status, noFile.body.error]).toEqual([400, 'Invalid request']);
    const valid = await upload([{ name: 'file', value: solidPng(4, 4), filename: 'a.png' }]);
    expect([valid.status, valid.headers['idempotency-replayed']]).toEqual([201, undefined]);
    const listed = await api.request<Schemas['MediaList']>({ method: 'GET', url: '/api/v1/media', key: u.key });
    expect(listed.body.data.map((m) => m.id)).toEqual([valid.body.id]);
  });
});

describe('an upload sent chunked, with no Content-Length', () => {
  function uploadChunked(key: string, png: Buffer, altText: string) {
    const { payload, contentType } = multipartBody([
      { name: 'altText', value: altText },
      { name: 'file', value: png, filename: 'image.png' },
    ]);
    return fetchChecked<Schemas['Media'] & { error?: string }>(running.server.url, 'POST', '/api/v1/media', {
      key: running.demo.key,
      headers: { 'content-type': contentType, 'idempotency-key': key },
      chunked: payload,
    });
  }

  it('is known by its content: another file with the same key is refused (422), the same file again is replayed', async () => {
    const listIds = async () =>
      (await fetchChecked<Schemas['MediaList']>(running.server.url, 'GET', '/api/v1/media?limit=100', { key: running.demo.key })).body.data.map((m) => m.id);
    const before = await listIds();
    const red = solidPng(8, 8, [255, 0, 0]);
    const first = await uploadChunked('chunked-upload', red, 'Red');
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ mime: 'image/png', bytes: red.length, altText: 'Red' });

    const blue = await uploadChunked('chunked-upload', solidPng(8, 8, [0, 0, 255]), 'Red');
    expect(blue.status).toBe(422);
    expect(blue.body).toEqual({ error: 'Idempotency-Key reused with a different request: use a new key for a new request', code: 'idempotency_key_reused' });
    const otherAltText = await uploadChunked('chunked-upload', red, 'Crimson');
    expect(otherAltText.status).toBe(422);

    // The same file and alt text, in a form framed afresh (another boundary), as a retry would send it.
    const again = await uploadChunked('chunked-upload', red, 'Red');
    expect(again.status).toBe(201);
    expect(again.headers['idempotency-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await listIds()).toEqual([first.body.id, ...before]);
    // Nothing the refused and replayed uploads sent is left behind.
    expect(await readdir(join(running.dataDir, 'media', 'staging'))).toEqual([]);
  });
});

describe('an answer lost after the post is saved', () => {
  it('is kept with the post: a retry after the commit replays it rather than creating another post', async () => {
    const u = await userWithKey(api.db);
    const acc = await account(api.db, u.userId);
    const app = await buildApp({ context: api.state });
    // The post is saved, then the answer fails on its way out (as when the database goes away just
    // after COMMIT): a 5xx, which frees a key whose answer was not kept.
    let failed = false;
    app.addHook('onSend', (req, _reply, payload, done) => {
      if (req.method === 'POST' && !failed) {
        failed = true;
        done(new Error('answer lost after the commit'));
        return;
      }
      done(null, payload);
    });
    try {
      const body = { accountIds: [acc], caption: 'Saved once' };
      const lost = await injectChecked(app, { method: 'POST', url: '/api/v1/posts', key: u.key, headers: { 'idempotency-key': 'after-commit' }, body });
      expect(lost.status).toBe(500);
      const retry = await injectChecked<Schemas['PostCreateResult']>(app, {
        method: 'POST',
        url: '/api/v1/posts',
        key: u.key,
        headers: { 'idempotency-key': 'after-commit' },
        body,
      });
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotency-replayed']).toBe('true');
      const saved = await api.db.selectFrom('posts').select('id').where('user_id', '=', u.userId).execute();
      expect(saved).toEqual([{ id: retry.body.id }]);
    } finally {
      await app.close();
    }
  });
});

describe('a client that loses the answer', () => {
  it('gets it on retry: the request sent, the connection dropped, the same key again returns the same post', async () => {
    const { key, accounts } = running.demo;
    const body = JSON.stringify({ accountIds: [accounts[0]?.id], caption: 'Lost in transit' });
    const url = new URL(running.server.url);
    const socket = connect(Number(url.port), url.hostname);
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /api/v1/posts HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
        `Idempotency-Key: lost-1\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    // Gone before any answer could arrive.
    socket.destroy();

    let retry = await fetchChecked<Schemas['PostDetail'] & { error?: string }>(running.server.url, 'POST', '/api/v1/posts', {
      key,
      json: JSON.parse(body) as object,
      headers: { 'idempotency-key': 'lost-1' },
    });
    // The dropped request may still be running: the retry is asked to wait, then gets its answer.
    for (const end = Date.now() + 10_000; retry.status === 409 && Date.now() < end;) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      retry = await fetchChecked(running.server.url, 'POST', '/api/v1/posts', {
        key,
        json: JSON.parse(body) as object,
        headers: { 'idempotency-key': 'lost-1' },
      });
    }
    expect(retry.status).toBe(201);
    const list = await fetchChecked<Schemas['PostList']>(running.server.url, 'GET', '/api/v1/posts?limit=100', { key });
    const lost = list.body.data.filter((p) => p.caption === 'Lost in transit');
    expect(lost.map((p) => p.id)).toEqual([retry.body.id]);
  });
});
