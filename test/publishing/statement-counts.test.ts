import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPost } from '../../src/domain/posts/create-post.js';
import { publishPostNow } from '../../src/domain/posts/publish-post.js';
import { updatePost } from '../../src/domain/posts/update-post.js';
import { takeDuePosts } from '../../src/domain/publishing/publication.js';
import { createWebhook } from '../../src/domain/webhooks/endpoints.js';
import { LocalDiskStorage } from '../../src/adapters/storage/local-disk-storage.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { account, userWithKey } from '../support/fixtures.js';
import { startTestPublishing, type TestPublishing } from '../support/publishing.js';

let database: TestDatabase;
let publishing: TestPublishing;
let mediaRoot: string;
beforeAll(async () => {
  database = await createTestDatabase();
  mediaRoot = mkdtempSync(join(tmpdir(), 'herald-statements-'));
  publishing = await startTestPublishing(database.db, new LocalDiskStorage(mediaRoot));
});
afterAll(async () => {
  await publishing?.close();
  await database?.close();
  rmSync(mediaRoot, { recursive: true, force: true });
});

/** Round trips to the database while `work` runs, BEGIN and COMMIT included: every query of every connection of this process. */
async function roundTrips(work: () => Promise<unknown>): Promise<number> {
  const query = vi.spyOn(pg.Client.prototype, 'query');
  try {
    await work();
    return query.mock.calls.length;
  } finally {
    query.mockRestore();
  }
}

/**
 * What the writes that move a post's due time, and one publication, cost in round trips: a guard
 * against one creeping back (README, Publishing, has them beside what they cost with pg-boss).
 */
describe('round trips to the database', () => {
  it.each([
    { endpoint: false, expected: { createPost: 4, updatePost: 12, publishPost: 7, publication: 10 } },
    // Four events (three targets and the post published): the post's detail, the events and their deliveries, one statement each.
    { endpoint: true, expected: { createPost: 4, updatePost: 12, publishPost: 7, publication: 13 } },
  ])('of a sandbox post of three targets, scheduled, moved, published now and published (webhook endpoint: $endpoint)', async ({ endpoint, expected }) => {
    const { db } = database;
    const u = await userWithKey(db);
    const accounts = [await account(db, u.userId, 'x', 'a'), await account(db, u.userId, 'linkedin', 'b'), await account(db, u.userId, 'threads', 'c')];
    if (endpoint) {
      await createWebhook(
        { db, vault: publishing.serviceDeps.vault, checkServiceUrl: () => {} },
        u.userId,
        { url: 'https://example.invalid/hook', eventTypes: ['post.published', 'target.published'] },
        new Date(),
      );
    }
    const inHours = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString();
    let id = '';
    const counts = {
      createPost: await roundTrips(async () => {
        id = (await createPost(db, u.userId, { accountIds: accounts, caption: 'Counted', postType: 'post', scheduledAt: inHours(1) }, new Date())).id;
      }),
      updatePost: await roundTrips(() => updatePost(db, u.userId, id, { scheduledAt: inHours(2) }, new Date())),
      publishPost: await roundTrips(() => publishPostNow(db, u.userId, id, new Date())),
      // One transaction: the post locked, its targets and accounts read, the outbox written with the
      // parts, the three outcomes and the post's status (a sandbox call commits with its outcome),
      // the owner's endpoints looked up; with one, the post's detail read and the events and deliveries written.
      publication: await roundTrips(async () => {
        const taken = await takeDuePosts(publishing.deps, 1);
        if (typeof taken === 'string') throw new Error(`nothing taken: ${taken}`);
        await taken.publish();
      }),
    };
    expect(counts).toEqual(expected);
    const post = await db.selectFrom('posts').select(['status', 'next_check_at']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(post).toEqual({ status: 'published', next_check_at: null });
  });
});
