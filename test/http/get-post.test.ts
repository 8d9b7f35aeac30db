import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { useTestApi } from '../support/api.js';
import { account, media, userWithKey } from '../support/fixtures.js';
import { createPost, postDetail } from '../support/posts.js';

const api = useTestApi();

describe('GET /api/v1/posts/{id}', () => {
  it('shows the targets in request order with their accounts, and the media in order', async () => {
    const u = await userWithKey(api.db);
    const accounts = [
      await account(api.db, u.userId, 'mastodon', 'ada'),
      await account(api.db, u.userId, 'x', 'bob'),
      await account(api.db, u.userId, 'bluesky', 'cy.example.com'),
    ];
    const mediaIds = [await media(api.db, u.userId), await media(api.db, u.userId)];
    const id = await createPost(api, u, {
      accountIds: accounts,
      caption: 'Hello',
      mediaIds: [mediaIds[1], mediaIds[0]],
      accountOverrides: [{ accountId: accounts[1], captionOverride: 'Hello X' }],
    });
    const post = await postDetail(api, u, id);
    expect(post.mediaIds).toEqual([mediaIds[1], mediaIds[0]]);
    expect(post.targets.map((t) => [t.accountId, t.platform, t.username, t.caption, t.status])).toEqual([
      [accounts[0], 'mastodon', 'ada', 'Hello', 'pending'],
      [accounts[1], 'x', 'bob', 'Hello X', 'pending'],
      [accounts[2], 'bluesky', 'cy.example.com', 'Hello', 'pending'],
    ]);
  });

  it('shows a post without media with an empty list of media', async () => {
    const u = await userWithKey(api.db);
    const id = await createPost(api, u, { accountIds: [await account(api.db, u.userId)], caption: 'Text only' });
    expect((await postDetail(api, u, id)).mediaIds).toEqual([]);
  });

  it("shows the targets' stored times in UTC, cut to the millisecond", async () => {
    const u = await userWithKey(api.db);
    const [published, failed] = [await account(api.db, u.userId, 'x', 'a'), await account(api.db, u.userId, 'mastodon', 'b')];
    const id = await createPost(api, u, { accountIds: [published, failed], caption: 'Times' });
    await api.db
      .updateTable('post_targets')
      .set({ state: 'published', published_at: sql`'2026-11-26 10:04:15.186789+01'`, platform_post_id: '1', url: 'https://x.com/a/status/1' })
      .where('post_id', '=', id)
      .where('account_id', '=', published)
      .execute();
    await api.db
      .updateTable('post_targets')
      .set({
        state: 'failed',
        attempts: 2,
        error_category: 'rate_limited',
        error_message: 'Slow down',
        next_attempt_at: sql`'2026-11-26 23:59:59.999999-05:30'`,
      })
      .where('post_id', '=', id)
      .where('account_id', '=', failed)
      .execute();
    const [x, mastodon] = (await postDetail(api, u, id)).targets;
    expect(x).toMatchObject({
      status: 'published',
      publishedAt: '2026-11-26T09:04:15.186Z',
      platformPostId: '1',
      url: 'https://x.com/a/status/1',
      error: null,
    });
    expect(mastodon).toMatchObject({
      status: 'failed',
      publishedAt: null,
      error: { message: 'Slow down', category: 'rate_limited', retrying: true, attempts: 2, nextAttemptAt: '2026-11-27T05:29:59.999Z' },
    });
  });
});
