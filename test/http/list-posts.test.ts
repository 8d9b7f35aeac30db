import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { useTestApi, type InvalidRequest, type Schemas } from '../support/api.js';
import { account, inOneHour, postCount, userWithKey } from '../support/fixtures.js';

const api = useTestApi();

async function createPosts(key: string, accountId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await api.request<Schemas['PostCreateResult']>({
      method: 'POST',
      url: '/api/v1/posts',
      key,
      body: { accountIds: [accountId], caption: `post ${i}` },
    });
    ids.push(res.body.id);
  }
  return ids;
}

describe('GET /api/v1/posts', () => {
  it("lists only the caller's posts, newest first, with the interface's fields", async () => {
    const ada = await userWithKey(api.db);
    const bob = await userWithKey(api.db);
    const adaAcc = await account(api.db, ada.userId);
    const bobAcc = await account(api.db, bob.userId);
    const ids = await createPosts(ada.key, adaAcc, 3);
    await createPosts(bob.key, bobAcc, 2);
    const scheduled = await api.request<Schemas['PostCreateResult']>({
      method: 'POST',
      url: '/api/v1/posts',
      key: ada.key,
      body: { accountIds: [adaAcc], firstComment: 'first!', postType: 'post', scheduledAt: inOneHour() },
    });

    const res = await api.request<Schemas['PostList']>({ method: 'GET', url: '/api/v1/posts', key: ada.key });
    expect(res.status).toBe(200);
    expect(res.body.limit).toBe(25);
    expect(res.body.offset).toBe(0);
    expect(res.body.data.map((p) => p.id)).toEqual([scheduled.body.id, ...ids.reverse()]);
    const [newest, draft] = res.body.data;
    expect(newest).toMatchObject({ userId: ada.userId, caption: null, firstComment: 'first!', postType: 'post', status: 'scheduled' });
    expect(draft).toMatchObject({ caption: 'post 2', firstComment: null, status: 'draft', scheduledAt: null });
    expect(draft?.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(draft?.updatedAt).toBe(draft?.createdAt);
  });

  it('pages with limit and offset without gaps or repeats, and echoes both', async () => {
    const u = await userWithKey(api.db);
    const acc = await account(api.db, u.userId);
    const ids = (await createPosts(u.key, acc, 5)).reverse();
    const seen: string[] = [];
    for (let offset = 0; offset < 6; offset += 2) {
      const res = await api.request<Schemas['PostList']>({ method: 'GET', url: `/api/v1/posts?limit=2&offset=${offset}`, key: u.key });
      expect(res.body.limit).toBe(2);
      expect(res.body.offset).toBe(offset);
      seen.push(...res.body.data.map((p) => p.id));
    }
    expect(seen).toEqual(ids);
    const past = await api.request<Schemas['PostList']>({ method: 'GET', url: '/api/v1/posts?offset=100', key: u.key });
    expect(past.body.data).toEqual([]);
    const edges = await api.request<Schemas['PostList']>({ method: 'GET', url: '/api/v1/posts?limit=100&offset=0', key: u.key });
    expect(edges.body.data).toHaveLength(5);
    const one = await api.request<Schemas['PostList']>({ method: 'GET', url: '/api/v1/posts?limit=1', key: u.key });
    expect(one.body.data.map((p) => p.id)).toEqual([ids[0]]);
  });

  it('refuses limit and offset out of range or not integers, never clamping', async () => {
    const u = await userWithKey(api.db);
    const cases: [string, string, string, string, string][] = [
      ['limit=0', 'too_small', '>=1', '0', 'limit'],
      ['limit=101', 'too_big', '<=100', '101', 'limit'],
      ['limit=-5', 'too_small', '>=1', '-5', 'limit'],
      ['offset=-1', 'too_small', '>=0', '-1', 'offset'],
      ['offset=2147483648', 'too_big', '<=2147483647', '2147483648', 'offset'],
      ['limit=abc', 'invalid_type', 'integer', 'string', 'limit'],
      ['limit=2.5', 'invalid_type', 'integer', 'string', 'limit'],
      ['offset=1e3x', 'invalid_type', 'integer', 'string', 'offset'],
      // Only plain decimal digits: Ajv alone would read these with Number() (1e999 as Infinity).
      ['limit=1e999', 'invalid_type', 'integer', 'string', 'limit'],
      ['offset=-1e400', 'invalid_type', 'integer', 'string', 'offset'],
      ['limit=1e1', 'invalid_type', 'integer', 'string', 'limit'],
      ['limit=0x10', 'invalid_type', 'integer', 'string', 'limit'],
      ['limit=%2B10', 'invalid_type', 'integer', 'string', 'limit'],
      ['offset=%2010', 'invalid_type', 'integer', 'string', 'offset'],
      ['limit=10.0', 'invalid_type', 'integer', 'string', 'limit'],
    ];
    for (const [query, code, expected, received, field] of cases) {
      const res = await api.request<InvalidRequest>({ method: 'GET', url: `/api/v1/posts?${query}`, key: u.key });
      expect(res.status, query).toBe(400);
      expect(res.body.error).toBe('Invalid request');
      expect(res.body.details, query).toEqual([expect.objectContaining({ code, expected, received, path: [field] })]);
    }
  });

  describe('with a cursor', () => {
    async function walk(key: string, query: string): Promise<{ ids: string[]; pages: number }> {
      const ids: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const url: string = `/api/v1/posts?${query}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
        const res = await api.request<Schemas['PostList']>({ method: 'GET', url, key });
        expect(res.status, url).toBe(200);
        expect(res.body.offset).toBe(0);
        ids.push(...res.body.data.map((p) => p.id));
        cursor = res.body.nextCursor;
        pages++;
      } while (cursor !== null && pages < 20);
      return { ids, pages };
    }

    it('walks every post once, newest first, and says null after the last page', async () => {
      const u = await userWithKey(api.db);
      const acc = await account(api.db, u.userId);
      const ids = (await createPosts(u.key, acc, 5)).reverse();
      expect(await walk(u.key, 'limit=2')).toEqual({ ids, pages: 3 });
      // A last page that is exactly full still says there is nothing after it.
      expect(await walk(u.key, 'limit=5')).toEqual({ ids, pages: 1 });
      const none = await userWithKey(api.db);
      const empty = await api.request<Schemas['PostList']>({ method: 'GET', url: '/api/v1/posts', key: none.key });
      expect(empty.body).toEqual({ data: [], limit: 25, offset: 0, nextCursor: null });
    });

    it('keeps its place while posts are created and deleted between pages', async () => {
      const u = await userWithKey(api.db);
      const acc = await account(api.db, u.userId);
      const older = (await createPosts(u.key, acc, 6)).reverse();
      // Seconds apart: a deleted post's place is kept to the millisecond.
      for (const [i, id] of older.entries())
        await sql`update posts set created_at = ${new Date(Date.UTC(2026, 0, 1, 0, 0, 10 - i))} where id = ${id}`.execute(api.db);
      const first = await api.request<Schemas['PostList']>({ method: 'GET', url: '/api/v1/posts?limit=3', key: u.key });
      expect(first.body.data.map((p) => p.id)).toEqual(older.slice(0, 3));
      const newer = await createPosts(u.key, acc, 2);
      // The post the cursor names goes too: the next page still starts where it was.
      const gone = await api.request({ method: 'DELETE', url: `/api/v1/posts/${older[2]}`, key: u.key });
      expect(gone.status).toBe(200);
      const cursor = encodeURIComponent(first.body.nextCursor ?? '');
      const second = await api.request<Schemas['PostList']>({ method: 'GET', url: `/api/v1/posts?limit=3&cursor=${cursor}`, key: u.key });
      expect(second.body.data.map((p) => p.id)).toEqual(older.slice(3));
      expect(second.body.nextCursor).toBeNull();
      const fresh = await api.request<Schemas['PostList']>({ method: 'GET', url: '/api/v1/posts?limit=2', key: u.key });
      expect(fresh.body.data.map((p) => p.id)).toEqual(newer.reverse());
    });

    it('orders posts created in the same millisecond by their stored time, then id, without skipping any', async () => {
      const u = await userWithKey(api.db);
      const acc = await account(api.db, u.userId);
      const ids = await createPosts(u.key, acc, 6);
      // Microseconds apart within one millisecond, and two at the very same instant.
      const times = [
        '2026-03-01 10:00:00.123900+00',
        '2026-03-01 10:00:00.123100+00',
        '2026-03-01 10:00:00.123500+00',
        '2026-03-01 10:00:00.123500+00',
        '2026-03-01 10:00:00.123499+00',
        '2026-03-01 10:00:00.124+00',
      ];
      for (const [i, id] of ids.entries()) await sql`update posts set created_at = ${times[i]}::timestamptz where id = ${id}`.execute(api.db);
      const expected = await api.db
        .selectFrom('posts')
        .select('id')
        .where('user_id', '=', u.userId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute();
      expect((await walk(u.key, 'limit=1')).ids).toEqual(expected.map((r) => r.id));
      expect((await walk(u.key, 'limit=4')).ids).toEqual(expected.map((r) => r.id));
    });

    it('pages within a status the same way', async () => {
      const u = await userWithKey(api.db);
      const acc = await account(api.db, u.userId);
      const drafts = (await createPosts(u.key, acc, 3)).reverse();
      await api.request({ method: 'POST', url: '/api/v1/posts', key: u.key, body: { accountIds: [acc], caption: 'later', scheduledAt: inOneHour() } });
      expect(await walk(u.key, 'limit=2&status=draft')).toEqual({ ids: drafts, pages: 2 });
    });

    it('refuses a cursor it did not make, and a cursor with an offset, and writes nothing', async () => {
      const u = await userWithKey(api.db);
      const acc = await account(api.db, u.userId);
      await createPosts(u.key, acc, 2);
      const page = await api.request<Schemas['PostList']>({ method: 'GET', url: '/api/v1/posts?limit=1', key: u.key });
      const good = page.body.nextCursor ?? '';
      const forged = Buffer.from('p1.post_x.1').toString('base64url');
      for (const cursor of [
        'abc',
        forged,
        `${good}x`,
        Buffer.from(`p1.${page.body.data[0]?.id}.12.3`).toString('base64url'),
        Buffer.from(`p2.${page.body.data[0]?.id}.1`).toString('base64url'),
      ]) {
        const res = await api.request<InvalidRequest>({ method: 'GET', url: `/api/v1/posts?cursor=${encodeURIComponent(cursor)}`, key: u.key });
        expect(res.status, cursor).toBe(400);
        expect(res.body.details).toEqual([expect.objectContaining({ code: 'invalid_string', received: cursor, path: ['cursor'] })]);
      }
      const both = await api.request<InvalidRequest>({ method: 'GET', url: `/api/v1/posts?offset=1&cursor=${encodeURIComponent(good)}`, key: u.key });
      expect(both.status).toBe(400);
      expect(both.body.details).toEqual([expect.objectContaining({ code: 'invalid_combination', received: '1', path: ['offset'] })]);
      expect(await postCount(api.db, u.userId)).toBe(2);
    });
  });
});
