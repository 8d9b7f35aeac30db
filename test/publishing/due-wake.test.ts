import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DUE_CHANNEL } from '../../src/db/queries/publishing.js';
import type { Database } from '../../src/db/schema.js';
import { createPost } from '../../src/domain/posts/create-post.js';
import { createWebhook } from '../../src/domain/webhooks/endpoints.js';
import { LocalDiskStorage } from '../../src/adapters/storage/local-disk-storage.js';
import { startWorker, type RunningWorker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { account, userWithKey } from '../support/fixtures.js';
import { startTestPublishing, type TestPublishing } from '../support/publishing.js';
import { until } from '../support/wait.js';
import { startTestReceiver, type TestReceiver } from '../support/webhook-receiver.js';

let database: TestDatabase;
let publishing: TestPublishing;
let receiver: TestReceiver;
let mediaRoot: string;
beforeAll(async () => {
  database = await createTestDatabase();
  mediaRoot = mkdtempSync(join(tmpdir(), 'herald-due-'));
  publishing = await startTestPublishing(database.db, new LocalDiskStorage(mediaRoot));
  receiver = await startTestReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await publishing?.close();
  await database?.close();
  rmSync(mediaRoot, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Well under the worker's own 30-s look, so only an announcement can have woken it in time. */
const WAIT = { timeoutMs: 20_000, everyMs: 50 };

describe('a running worker', () => {
  it('sends no statement while nothing is due, then publishes a post and delivers its event when they come due', async () => {
    // Everything the worker sends goes through this count.
    let statements = 0;
    const counted: Kysely<Database> = database.db.withPlugin({
      transformQuery: (args) => args.node,
      transformResult: (args) => {
        statements += 1;
        return Promise.resolve(args.result);
      },
    });
    let worker: RunningWorker | undefined;
    try {
      worker = await startWorker({ ...publishing.deps, db: counted }, 2, database);
      await sleep(1_000);
      statements = 0;
      await sleep(3_000);
      expect(statements).toBe(0);

      const u = await userWithKey(database.db);
      const accounts = [await account(database.db, u.userId, 'x', 'ada'), await account(database.db, u.userId, 'linkedin', 'ada-l')];
      await createWebhook(
        { db: database.db, vault: publishing.serviceDeps.vault, checkServiceUrl: () => {} },
        u.userId,
        { url: receiver.url, eventTypes: ['post.published'] },
        new Date(),
      );
      const scheduledAt = new Date(Date.now() + 1_500);
      const { id } = await createPost(
        database.db,
        u.userId,
        { accountIds: accounts, caption: 'On time', postType: 'post', scheduledAt: scheduledAt.toISOString() },
        new Date(),
      );

      // Well before the worker's own look (every 30 s) would find it: only the announcement can have woken it.
      await until(
        'the post to be published',
        async () => (await database.db.selectFrom('posts').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status === 'published',
        WAIT,
      );
      const targets = await database.db
        .selectFrom('post_targets')
        .select(['account_id', 'state', 'published_at'])
        .where('post_id', '=', id)
        .orderBy('position')
        .execute();
      expect(targets.map((t) => [t.account_id, t.state])).toEqual([
        [accounts[0], 'published'],
        [accounts[1], 'published'],
      ]);
      for (const t of targets) expect(t.published_at?.getTime()).toBeGreaterThanOrEqual(scheduledAt.getTime());
      const outbox = await database.db.selectFrom('sandbox_outbox').select('account_id').where('account_id', 'in', accounts).execute();
      expect(outbox.map((r) => r.account_id).sort()).toEqual([...accounts].sort());

      const [event] = await receiver.waitFor(1, 20_000);
      expect(event?.json).toMatchObject({ type: 'post.published', data: { id } });
    } finally {
      await worker?.stop();
    }
  });
});

describe('due work', () => {
  it('is announced as it commits when due within a minute, with its due time; work due later is not', async () => {
    const heard: string[] = [];
    const stop = await database.listen(DUE_CHANNEL, { notified: (payload) => heard.push(payload), listening: () => {}, deaf: () => {} });
    try {
      const u = await userWithKey(database.db);
      const x = await account(database.db, u.userId, 'x', 'ada');
      const soon = new Date(Date.now() + 20_000);
      const later = new Date(Date.now() + 5 * 60_000);
      await createPost(database.db, u.userId, { accountIds: [x], caption: 'later', postType: 'post', scheduledAt: later.toISOString() }, new Date());
      const { id } = await createPost(
        database.db,
        u.userId,
        { accountIds: [x], caption: 'soon', postType: 'post', scheduledAt: soon.toISOString() },
        new Date(),
      );
      const sooner = new Date(Date.now() + 10_000);
      await database.db.updateTable('posts').set({ next_check_at: sooner }).where('id', '=', id).execute();
      await until('two announcements', () => heard.length >= 2, WAIT);
      await sleep(200);
      expect(heard).toEqual([String(soon.getTime()), String(sooner.getTime())]);
    } finally {
      await stop();
    }
  });
});
