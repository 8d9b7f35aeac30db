import { describe, expect, it } from 'vitest';
import { useTestApi, type InvalidRequest, type Schemas } from '../support/api.js';
import { account, inOneHour, userWithKey } from '../support/fixtures.js';

const api = useTestApi();

async function createPosts(key: string, accountId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await api.request<Schemas['PostCreateResult']>({ method: 'POST', url: '/api/v1/posts', key, body: { accountIds: [accountId], caption: `post ${i}` } });
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
      // Numbers too large to hold are no number at all (Ajv alone would take them as Infinity).
      ['limit=1e999', 'invalid_type', 'integer', 'number', 'limit'],
      ['offset=-1e400', 'invalid_type', 'integer', 'number', 'offset'],
    ];
    for (const [query, code, expected, received, field] of cases) {
      const res = await api.request<InvalidRequest>({ method: 'GET', url: `/api/v1/posts?${query}`, key: u.key });
      expect(res.status, query).toBe(400);
      expect(res.body.error).toBe('Invalid request');
      expect(res.body.details, query).toEqual([expect.objectContaining({ code, expected, received, path: [field] })]);
    }
  });
});
