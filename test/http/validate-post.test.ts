import { describe, expect, it } from 'vitest';
import { useTestApi, type InvalidRequest, type Schemas } from '../support/api.js';
import { account, media, postCount, userWithKey } from '../support/fixtures.js';

const api = useTestApi();

type PostValidation = Schemas['PostValidation'];

describe('POST /api/v1/posts/validate', () => {
  it("reports each target's caption, counted in its platform's unit against its limit, with nothing written", async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x');
    const bsky = await account(api.db, u.userId, 'bluesky');
    const caption = `Launch 🚀 ${'a'.repeat(200)}`;
    const res = await api.request<PostValidation>({
      method: 'POST',
      url: '/api/v1/posts/validate',
      key: u.key,
      body: { accountIds: [x, bsky], caption, scheduledAt: new Date(Date.now() + 3_600_000).toISOString() },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      valid: true,
      targets: [
        { accountId: x, platform: 'x', caption, lengths: [{ unit: 'weighted', count: 210, max: 280 }], problem: null },
        {
          accountId: bsky,
          platform: 'bluesky',
          caption,
          lengths: [
            { unit: 'graphemes', count: 209, max: 300 },
            { unit: 'utf8Bytes', count: 212, max: 3000 },
          ],
          problem: null,
        },
      ],
    });
    expect(await postCount(api.db, u.userId)).toBe(0);
  });

  it('reports a broken limit per target, with the message createPost answers, and the others as fine', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x');
    const li = await account(api.db, u.userId, 'linkedin');
    const ig = await account(api.db, u.userId, 'instagram');
    const body = { accountIds: [x, li, ig], caption: 'x'.repeat(281), accountOverrides: [{ accountId: li, captionOverride: 'Short for LinkedIn' }] };
    const res = await api.request<PostValidation>({ method: 'POST', url: '/api/v1/posts/validate', key: u.key, body });
    expect(res.status).toBe(200);
    expect(res.body.valid).toBe(false);
    expect(res.body.targets.map((t) => [t.platform, t.caption?.length, t.problem])).toEqual([
      ['x', 281, `X caption allows at most 280 characters; got 281 (account ${x})`],
      ['linkedin', 18, null],
      ['instagram', 281, `Instagram post allows between 1 and 10 files; got 0 (account ${ig})`],
    ]);
    const created = await api.request({ method: 'POST', url: '/api/v1/posts', key: u.key, body });
    expect(created).toMatchObject({ status: 400, body: { error: res.body.targets[0]?.problem } });
    expect(await postCount(api.db, u.userId)).toBe(0);
  });

  it('leaves out lengths where no caption is judged: none given, or thread parts published instead', async () => {
    const u = await userWithKey(api.db);
    const th = await account(api.db, u.userId, 'threads');
    const img = await media(api.db, u.userId);
    const res = await api.request<PostValidation>({
      method: 'POST',
      url: '/api/v1/posts/validate',
      key: u.key,
      body: { accountIds: [th], postType: 'thread', caption: 'long text for others', threadParts: { [th]: ['one', 'two'] }, mediaIds: [img] },
    });
    expect(res.body.targets).toEqual([{ accountId: th, platform: 'threads', caption: 'long text for others', lengths: [], problem: null }]);
  });

  it('answers the same 400 and 403 as createPost', async () => {
    const u = await userWithKey(api.db);
    const other = await userWithKey(api.db);
    const foreign = await account(api.db, other.userId);
    const mine = await account(api.db, u.userId);
    const invalid = await api.request<InvalidRequest>({ method: 'POST', url: '/api/v1/posts/validate', key: u.key, body: { caption: 'no accounts' } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.details.map((d) => d.path)).toEqual([['accountIds']]);
    const notMine = await api.request({ method: 'POST', url: '/api/v1/posts/validate', key: u.key, body: { accountIds: [mine, foreign], caption: 'hi' } });
    expect(notMine).toMatchObject({ status: 403, body: { error: `Account not accessible: ${foreign}` } });
    const past = await api.request<InvalidRequest>({
      method: 'POST',
      url: '/api/v1/posts/validate',
      key: u.key,
      body: { accountIds: [mine], scheduledAt: '2020-01-01T00:00:00Z' },
    });
    expect(past.body.details.map((d) => [d.path, d.code])).toEqual([[['scheduledAt'], 'too_small']]);
    expect((await api.request({ method: 'POST', url: '/api/v1/posts/validate', body: { accountIds: [mine] } })).status).toBe(401);
  });
});
