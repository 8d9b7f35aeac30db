import { describe, expect, it } from 'vitest';
import { useTestApi, type Schemas } from '../support/api.js';
import { account, inOneHour, userWithKey } from '../support/fixtures.js';

const api = useTestApi();

async function create(key: string, accountId: string, scheduledAt?: string): Promise<string> {
  const body = scheduledAt === undefined ? { accountIds: [accountId], caption: 'c' } : { accountIds: [accountId], caption: 'c', scheduledAt };
  const res = await api.request<Schemas['PostCreateResult']>({ method: 'POST', url: '/api/v1/posts', key, body });
  return res.body.id;
}

async function exists(id: string): Promise<boolean> {
  return (await api.db.selectFrom('posts').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

describe('DELETE /api/v1/posts/{id}', () => {
  it('deletes a draft and a scheduled post, with their targets', async () => {
    const u = await userWithKey(api.db);
    const acc = await account(api.db, u.userId);
    for (const id of [await create(u.key, acc), await create(u.key, acc, inOneHour())]) {
      const res = await api.request({ method: 'DELETE', url: `/api/v1/posts/${id}`, key: u.key });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });
      expect(await exists(id)).toBe(false);
      const targets = await api.db.selectFrom('post_targets').select('post_id').where('post_id', '=', id).execute();
      expect(targets).toEqual([]);
    }
  });

  it('refuses to delete a published post, which stays', async () => {
    const u = await userWithKey(api.db);
    const acc = await account(api.db, u.userId);
    const id = await create(u.key, acc, inOneHour());
    expect((await api.request({ method: 'POST', url: `/api/v1/posts/${id}/publish`, key: u.key })).status).toBe(202);
    await api.publishing.drain();
    const res = await api.request({ method: 'DELETE', url: `/api/v1/posts/${id}`, key: u.key });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Cannot delete published post', code: 'post_published' });
    expect(await exists(id)).toBe(true);
  });

  it("answers 404 Post not found for another user's post, which stays", async () => {
    const ada = await userWithKey(api.db);
    const bob = await userWithKey(api.db);
    const id = await create(bob.key, await account(api.db, bob.userId));
    const res = await api.request({ method: 'DELETE', url: `/api/v1/posts/${id}`, key: ada.key });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Post not found', code: 'post_not_found' });
    expect(await exists(id)).toBe(true);
  });

  it('answers 404 Post not found for unknown, malformed, absurdly long and already deleted ids', async () => {
    const u = await userWithKey(api.db);
    const id = await create(u.key, await account(api.db, u.userId));
    await api.request({ method: 'DELETE', url: `/api/v1/posts/${id}`, key: u.key });
    const live = await create(u.key, await account(api.db, u.userId));
    const ids = [
      id,
      'post_00000000000000000000000000',
      'nope',
      '%27%3B%20drop%20table%20posts%3B--',
      'x'.repeat(20_000),
      encodeURIComponent('ü/../'),
      '%00',
      `${live}%00`,
    ];
    for (const bad of ids) {
      const res = await api.request({ method: 'DELETE', url: `/api/v1/posts/${bad}`, key: u.key });
      expect(res.status, bad.slice(0, 40)).toBe(404);
      expect(res.body).toEqual({ error: 'Post not found', code: 'post_not_found' });
    }
    expect(await exists(live)).toBe(true);
  });

  it('answers 404 in the error shape for a path whose percent-encoding is not UTF-8, and deletes nothing', async () => {
    const u = await userWithKey(api.db);
    const live = await create(u.key, await account(api.db, u.userId));
    // The last one is longer than the router takes a path id to be (found by the fuzz test: it was a 500).
    for (const bad of ['%ED%A0%80', `${live}%ED%A0%80`, '%FF', `${live}%C3`, `post_${'0'.repeat(70_000)}`]) {
      for (const path of [`/api/v1/posts/${bad}`, `/api/v1/media/${bad}`]) {
        const res = await api.request({ method: 'DELETE', url: path, key: u.key });
        expect(res.status, path.slice(0, 60)).toBe(404);
        expect(res.body).toEqual({ error: 'Not found', code: 'not_found' });
      }
    }
    expect(await exists(live)).toBe(true);
  });
});
