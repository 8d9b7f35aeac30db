import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { disconnectAccount } from '../../src/domain/accounts.js';
import { addMember, createOrganization } from '../../src/domain/users.js';
import { connectAccount } from '../../src/domain/accounts.js';
import { useTestApi, type InvalidRequest, type Schemas } from '../support/api.js';
import { account, inOneHour, media, postCount, userWithKey } from '../support/fixtures.js';
import { stringMatching } from '../support/matchers.js';

const api = useTestApi();

/** Each target's thread_parts, and whether the column is SQL NULL (not a stored JSON null). */
async function storedThreadParts(postId: string) {
  return api.db
    .selectFrom('post_targets')
    .select(['account_id', 'thread_parts', sql<boolean>`thread_parts is null`.as('none')])
    .where('post_id', '=', postId)
    .orderBy('position')
    .execute();
}

describe('POST /api/v1/posts: creating', () => {
  it('saves a draft when scheduledAt is omitted, with the defaults applied', async () => {
    const u = await userWithKey(api.db);
    const acc = await account(api.db, u.userId);
    const res = await api.request<Schemas['PostCreateResult']>({
      method: 'POST',
      url: '/api/v1/posts',
      key: u.key,
      body: { accountIds: [acc], caption: 'Hi' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: stringMatching(/^post_[0-9a-z]{26}$/), status: 'draft' });
    const row = await api.db.selectFrom('posts').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ user_id: u.userId, caption: 'Hi', first_comment: null, post_type: 'post', status: 'draft', scheduled_at: null });
  });

  it('schedules a post when scheduledAt is given, storing the instant whatever the offset', async () => {
    const u = await userWithKey(api.db);
    const acc = await account(api.db, u.userId);
    const res = await api.request<Schemas['PostCreateResult']>({
      method: 'POST',
      url: '/api/v1/posts',
      key: u.key,
      body: { accountIds: [acc], caption: 'Later', scheduledAt: '2099-06-01T12:30:00.5+02:00' },
    });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('scheduled');
    const list = await api.request<Schemas['PostList']>({ method: 'GET', url: '/api/v1/posts', key: u.key });
    expect(list.body.data[0]).toMatchObject({ id: res.body.id, status: 'scheduled', scheduledAt: '2099-06-01T10:30:00.500Z' });
  });

  it('cross-posts as one post with one target per account, keeping overrides, fields, thread parts and media', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x', 'ada');
    const threads = await account(api.db, u.userId, 'threads', 'ada');
    const image = await media(api.db, u.userId);
    const res = await api.request<Schemas['PostCreateResult']>({
      method: 'POST',
      url: '/api/v1/posts',
      key: u.key,
      body: {
        accountIds: [x, threads],
        caption: 'Default caption',
        postType: 'thread',
        mediaIds: [image],
        accountOverrides: [{ accountId: threads, captionOverride: 'For Threads' }],
        threadParts: { [x]: ['one', 'two'], [threads]: null },
      },
    });
    expect(res.status).toBe(201);
    expect(await postCount(api.db, u.userId)).toBe(1);
    const targets = await api.db
      .selectFrom('post_targets')
      .select(['post_id', 'account_id', 'position', 'caption_override', 'fields', 'thread_parts'])
      .where('post_id', '=', res.body.id)
      .orderBy('position')
      .execute();
    expect(targets).toEqual([
      { post_id: res.body.id, account_id: x, position: 0, caption_override: null, fields: null, thread_parts: ['one', 'two'] },
      { post_id: res.body.id, account_id: threads, position: 1, caption_override: 'For Threads', fields: null, thread_parts: null },
    ]);
    const attached = await api.db.selectFrom('post_media').selectAll().where('post_id', '=', res.body.id).execute();
    expect(attached).toEqual([{ post_id: res.body.id, media_id: image, position: 0 }]);
  });

  it('takes threadParts null as no thread parts for any account, stored as SQL NULL', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x', 'ada');
    const bluesky = await account(api.db, u.userId, 'bluesky', 'ada');
    const res = await api.request<Schemas['PostCreateResult']>({
      method: 'POST',
      url: '/api/v1/posts',
      key: u.key,
      body: { accountIds: [x, bluesky], caption: 'Hi', threadParts: null },
    });
    expect(res.status).toBe(201);
    expect(await storedThreadParts(res.body.id)).toEqual([
      { account_id: x, thread_parts: null, none: true },
      { account_id: bluesky, thread_parts: null, none: true },
    ]);
  });

  it('takes a null threadParts value as no thread parts for that account alone', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x', 'ada');
    const bluesky = await account(api.db, u.userId, 'bluesky', 'ada');
    const res = await api.request<Schemas['PostCreateResult']>({
      method: 'POST',
      url: '/api/v1/posts',
      key: u.key,
      body: { accountIds: [x, bluesky], postType: 'thread', threadParts: { [x]: null, [bluesky]: ['one', 'two'] } },
    });
    expect(res.status).toBe(201);
    expect(await storedThreadParts(res.body.id)).toEqual([
      { account_id: x, thread_parts: null, none: true },
      { account_id: bluesky, thread_parts: ['one', 'two'], none: false },
    ]);
  });

  it("lets a member post to an organization's account", async () => {
    const u = await userWithKey(api.db);
    const { id: orgId } = await createOrganization(api.db, 'Acme');
    await addMember(api.db, orgId, u.userId);
    const { id: shared } = await connectAccount(api.db, { platform: 'x', username: 'acme', displayName: null, owner: { orgId } });
    const res = await api.request({ method: 'POST', url: '/api/v1/posts', key: u.key, body: { accountIds: [shared], caption: 'Team news' } });
    expect(res.status).toBe(201);
  });
});

describe('POST /api/v1/posts: invalid requests are 400 with details and write nothing', () => {
  async function expectInvalid(body: unknown, expected: InvalidRequest['details'], init?: { payload?: string; headers?: Record<string, string> }) {
    const u = await userWithKey(api.db);
    const res = await api.request<InvalidRequest>({ method: 'POST', url: '/api/v1/posts', key: u.key, body, ...init });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Invalid request', code: 'invalid_request', details: expected });
    expect(await postCount(api.db, u.userId)).toBe(0);
  }

  it('requires accountIds', async () => {
    await expectInvalid({ caption: 'x' }, [{ code: 'invalid_type', expected: 'array', received: 'undefined', path: ['accountIds'], message: 'Required' }]);
  });

  it('requires at least one account', async () => {
    await expectInvalid({ accountIds: [] }, [
      { code: 'too_small', expected: '>=1', received: '0', path: ['accountIds'], message: 'must NOT have fewer than 1 items' },
    ]);
  });

  it('refuses an unknown field instead of ignoring it (a typo must not create a draft)', async () => {
    await expectInvalid({ accountIds: ['acc_x'], scheduleAt: '2099-01-01T00:00:00Z' }, [
      { code: 'unrecognized_keys', expected: 'never', received: 'scheduleAt', path: ['scheduleAt'], message: "Unrecognized key: 'scheduleAt'" },
    ]);
  });

  it('does not coerce types: a number is not a string, a string is not an array', async () => {
    await expectInvalid({ accountIds: 'acc_x', caption: 123 }, [
      { code: 'invalid_type', expected: 'array', received: 'string', path: ['accountIds'], message: 'Expected array, received string' },
      { code: 'invalid_type', expected: 'string', received: 'number', path: ['caption'], message: 'Expected string, received number' },
    ]);
  });

  it('locates a failure inside an array with its integer index', async () => {
    await expectInvalid({ accountIds: ['acc_a'], accountOverrides: [{ accountId: 7 }] }, [
      {
        code: 'invalid_type',
        expected: 'string',
        received: 'number',
        path: ['accountOverrides', 0, 'accountId'],
        message: 'Expected string, received number',
      },
    ]);
  });

  it('refuses an unknown postType', async () => {
    await expectInvalid({ accountIds: ['acc_a'], postType: 'tweet' }, [
      {
        code: 'invalid_enum_value',
        expected: 'post | carousel | reel | story | short | thread',
        received: 'tweet',
        path: ['postType'],
        message: "Expected post | carousel | reel | story | short | thread, received 'tweet'",
      },
    ]);
  });

  it('refuses duplicate accountIds', async () => {
    await expectInvalid({ accountIds: ['acc_a', 'acc_b', 'acc_a'] }, [
      { code: 'not_unique', expected: 'unique items', received: 'acc_a', path: ['accountIds', 2], message: 'Duplicate item at position 2' },
    ]);
  });

  it('refuses a scheduledAt without a zone, or not a timestamp at all', async () => {
    for (const scheduledAt of ['2099-01-01T10:00:00', 'tomorrow', '2099-02-30T10:00:00Z']) {
      await expectInvalid({ accountIds: ['acc_a'], scheduledAt }, [
        { code: 'invalid_string', expected: 'date-time', received: scheduledAt, path: ['scheduledAt'], message: 'must match format "date-time"' },
      ]);
    }
  });

  it('refuses a leap second, which has no instant to store', async () => {
    await expectInvalid({ accountIds: ['acc_a'], scheduledAt: '2099-12-31T23:59:60Z' }, [
      {
        code: 'invalid_string',
        expected: 'date-time',
        received: '2099-12-31T23:59:60Z',
        path: ['scheduledAt'],
        message: 'scheduledAt is not a representable instant',
      },
    ]);
  });

  it('refuses a scheduledAt in the past', async () => {
    const u = await userWithKey(api.db);
    const acc = await account(api.db, u.userId);
    const res = await api.request<InvalidRequest>({
      method: 'POST',
      url: '/api/v1/posts',
      key: u.key,
      body: { accountIds: [acc], scheduledAt: '2020-01-01T00:00:00Z' },
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([
      {
        code: 'too_small',
        expected: stringMatching(/^after \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        received: '2020-01-01T00:00:00Z',
        path: ['scheduledAt'],
        message: 'scheduledAt must be in the future',
      },
    ]);
    expect(await postCount(api.db, u.userId)).toBe(0);
  });

  it('requires overrides and thread parts to name accounts of accountIds, one override each', async () => {
    await expectInvalid(
      {
        accountIds: ['acc_a'],
        accountOverrides: [{ accountId: 'acc_a' }, { accountId: 'acc_b' }, { accountId: 'acc_a', captionOverride: 'again' }],
        threadParts: { acc_a: ['1'], acc_c: ['2'] },
      },
      [
        {
          code: 'invalid_reference',
          expected: 'one of accountIds',
          received: 'acc_b',
          path: ['accountOverrides', 1, 'accountId'],
          message: 'Account acc_b is not in accountIds',
        },
        {
          code: 'not_unique',
          expected: 'one override per account',
          received: 'acc_a',
          path: ['accountOverrides', 2, 'accountId'],
          message: 'Account acc_a already has an override',
        },
        {
          code: 'invalid_reference',
          expected: 'one of accountIds',
          received: 'acc_c',
          path: ['threadParts', 'acc_c'],
          message: 'Account acc_c is not in accountIds',
        },
      ],
    );
  });

  it('reports every schema problem at once', async () => {
    const u = await userWithKey(api.db);
    const res = await api.request<InvalidRequest>({ method: 'POST', url: '/api/v1/posts', key: u.key, body: { caption: 1, extra: true, mediaIds: [1] } });
    expect(res.status).toBe(400);
    expect(res.body.details.map((d) => d.path)).toEqual(expect.arrayContaining([['accountIds'], ['extra'], ['caption'], ['mediaIds', 0]]));
    expect(res.body.details).toHaveLength(4);
  });

  it('answers the first 20 problems and counts the rest, however many the body holds', async () => {
    const u = await userWithKey(api.db);
    const body: Record<string, unknown> = { accountIds: ['acc_x'] };
    for (let i = 0; i < 40_000; i++) body[`k${i}`] = i;
    const res = await api.request<InvalidRequest & { detailsOmitted?: number }>({ method: 'POST', url: '/api/v1/posts', key: u.key, body });
    expect(res.status).toBe(400);
    expect(res.body.details).toHaveLength(20);
    expect(res.body.details[0]).toEqual({ code: 'unrecognized_keys', expected: 'never', received: 'k0', path: ['k0'], message: "Unrecognized key: 'k0'" });
    expect(res.body.detailsOmitted).toBe(39_980);
    expect(JSON.stringify(res.body).length).toBeLessThan(4096);
    expect(await postCount(api.db, u.userId)).toBe(0);
  });

  it('treats a missing body as an invalid request', async () => {
    await expectInvalid(undefined, [
      { code: 'invalid_type', expected: 'object', received: 'undefined', path: [], message: 'Expected object, received undefined' },
    ]);
    await expectInvalid(
      undefined,
      [{ code: 'invalid_type', expected: 'object', received: 'undefined', path: [], message: 'Expected object, received undefined' }],
      {
        payload: '',
        headers: { 'content-type': 'application/json' },
      },
    );
  });

  it('refuses a JSON body that is not an object', async () => {
    await expectInvalid(['acc_a'], [{ code: 'invalid_type', expected: 'object', received: 'array', path: [], message: 'Expected object, received array' }]);
  });
});

describe('POST /api/v1/posts: bodies that are not JSON', () => {
  it('answers 400 for malformed JSON', async () => {
    const u = await userWithKey(api.db);
    const res = await api.request({
      method: 'POST',
      url: '/api/v1/posts',
      key: u.key,
      payload: '{"accountIds": [',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Request body is not valid JSON', code: 'invalid_json' });
  });

  it('answers 415 for another content type', async () => {
    const u = await userWithKey(api.db);
    const res = await api.request({ method: 'POST', url: '/api/v1/posts', key: u.key, payload: 'accountIds=acc_a', headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ error: 'Unsupported content type: send application/json', code: 'unsupported_content_type' });
  });

  it('answers 413 for a body over 1 MiB', async () => {
    const u = await userWithKey(api.db);
    const acc = await account(api.db, u.userId);
    const res = await api.request({ method: 'POST', url: '/api/v1/posts', key: u.key, body: { accountIds: [acc], caption: 'a'.repeat(1_100_000) } });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: 'Request body too large', code: 'body_too_large' });
    expect(await postCount(api.db, u.userId)).toBe(0);
  });

  it('refuses prototype pollution keys', async () => {
    const u = await userWithKey(api.db);
    const res = await api.request({
      method: 'POST',
      url: '/api/v1/posts',
      key: u.key,
      payload: '{"accountIds":["acc_a"],"__proto__":{"x":1}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Request body is not valid JSON', code: 'invalid_json' });
    expect(await postCount(api.db, u.userId)).toBe(0);
  });
});

describe('POST /api/v1/posts: ownership is 403 and writes nothing', () => {
  it("refuses another user's account", async () => {
    const ada = await userWithKey(api.db);
    const bob = await userWithKey(api.db);
    const mine = await account(api.db, ada.userId);
    const theirs = await account(api.db, bob.userId);
    const res = await api.request({ method: 'POST', url: '/api/v1/posts', key: ada.key, body: { accountIds: [mine, theirs], caption: 'hi' } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: `Account not accessible: ${theirs}`, code: 'not_accessible' });
    expect(await postCount(api.db, ada.userId)).toBe(0);
  });

  it('refuses an unknown account exactly like a foreign one', async () => {
    const u = await userWithKey(api.db);
    const res = await api.request({ method: 'POST', url: '/api/v1/posts', key: u.key, body: { accountIds: ['acc_doesnotexist'], caption: 'hi' } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'Account not accessible: acc_doesnotexist', code: 'not_accessible' });
  });

  it('refuses a disconnected account exactly like a foreign one', async () => {
    const u = await userWithKey(api.db);
    const acc = await account(api.db, u.userId);
    await disconnectAccount(api.publishing.serviceDeps, acc, new Date());
    const res = await api.request({ method: 'POST', url: '/api/v1/posts', key: u.key, body: { accountIds: [acc], caption: 'hi' } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: `Account not accessible: ${acc}`, code: 'not_accessible' });
    expect(await postCount(api.db, u.userId)).toBe(0);
  });

  it("refuses an organization's account to a user who is not a member", async () => {
    const u = await userWithKey(api.db);
    const { id: orgId } = await createOrganization(api.db, 'Other');
    const { id: orgAccount } = await connectAccount(api.db, { platform: 'x', username: 'other', displayName: null, owner: { orgId } });
    const res = await api.request({ method: 'POST', url: '/api/v1/posts', key: u.key, body: { accountIds: [orgAccount], caption: 'hi' } });
    expect(res.status).toBe(403);
  });

  it("refuses another user's media", async () => {
    const ada = await userWithKey(api.db);
    const bob = await userWithKey(api.db);
    const acc = await account(api.db, ada.userId);
    const bobsImage = await media(api.db, bob.userId);
    const res = await api.request({ method: 'POST', url: '/api/v1/posts', key: ada.key, body: { accountIds: [acc], caption: 'hi', mediaIds: [bobsImage] } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: `Media not accessible: ${bobsImage}`, code: 'not_accessible' });
    expect(await postCount(api.db, ada.userId)).toBe(0);
  });

  it("judges no platform limit while an id is not the caller's: a foreign media id with Instagram is 403, not a file count", async () => {
    const ada = await userWithKey(api.db);
    const bob = await userWithKey(api.db);
    const ig = await account(api.db, ada.userId, 'instagram');
    const bobsImage = await media(api.db, bob.userId);
    for (const mediaIds of [[bobsImage], ['med_doesnotexist'], ['med_\u0000']]) {
      const res = await api.request({ method: 'POST', url: '/api/v1/posts', key: ada.key, body: { accountIds: [ig], caption: 'hi', mediaIds } });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: `Media not accessible: ${mediaIds[0]}`, code: 'not_accessible' });
    }
    expect(await postCount(api.db, ada.userId)).toBe(0);
  });

  it('answers 403 for a foreign account alongside a caption too long for X, and for foreign media alongside it', async () => {
    const ada = await userWithKey(api.db);
    const bob = await userWithKey(api.db);
    const x = await account(api.db, ada.userId, 'x');
    const theirs = await account(api.db, bob.userId, 'x');
    const bobsImage = await media(api.db, bob.userId);
    const tooLong = 'a'.repeat(281);
    const foreignAccount = await api.request({ method: 'POST', url: '/api/v1/posts', key: ada.key, body: { accountIds: [x, theirs], caption: tooLong } });
    expect(foreignAccount.status).toBe(403);
    expect(foreignAccount.body).toEqual({ error: `Account not accessible: ${theirs}`, code: 'not_accessible' });
    const foreignMedia = await api.request({
      method: 'POST',
      url: '/api/v1/posts',
      key: ada.key,
      body: { accountIds: [x], caption: tooLong, mediaIds: [bobsImage] },
    });
    expect(foreignMedia.status).toBe(403);
    expect(foreignMedia.body).toEqual({ error: `Media not accessible: ${bobsImage}`, code: 'not_accessible' });
    expect(await postCount(api.db, ada.userId)).toBe(0);
  });

  it('names the first foreign account before any foreign media', async () => {
    const ada = await userWithKey(api.db);
    const bob = await userWithKey(api.db);
    const mine = await account(api.db, ada.userId);
    const first = await account(api.db, bob.userId);
    const second = await account(api.db, bob.userId);
    const bobsImage = await media(api.db, bob.userId);
    const res = await api.request({
      method: 'POST',
      url: '/api/v1/posts',
      key: ada.key,
      body: { accountIds: [mine, first, second], caption: 'hi', mediaIds: [bobsImage] },
    });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: `Account not accessible: ${first}`, code: 'not_accessible' });
    expect(await postCount(api.db, ada.userId)).toBe(0);
  });

  it("judges the limits once every id is the caller's", async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x');
    const res = await api.request({ method: 'POST', url: '/api/v1/posts', key: u.key, body: { accountIds: [x], caption: 'a'.repeat(281) } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: `X caption allows at most 280 characters; got 281 (account ${x})`, code: 'platform_limit' });
    expect(await postCount(api.db, u.userId)).toBe(0);
  });

  it('checks the schema before ownership: a bad body with a foreign account is 400', async () => {
    const u = await userWithKey(api.db);
    const res = await api.request({ method: 'POST', url: '/api/v1/posts', key: u.key, body: { accountIds: ['acc_foreign'], caption: 5 } });
    expect(res.status).toBe(400);
  });
});

describe('POST /api/v1/posts: scheduling', () => {
  it('accepts a time just ahead', async () => {
    const u = await userWithKey(api.db);
    const acc = await account(api.db, u.userId);
    const res = await api.request({ method: 'POST', url: '/api/v1/posts', key: u.key, body: { accountIds: [acc], caption: 'soon', scheduledAt: inOneHour() } });
    expect(res.status).toBe(201);
  });
});
