import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import { createPost } from '../../src/domain/posts/create-post.js';
import { herald, heraldSpawn, json } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { account, userWithKey } from '../support/fixtures.js';

const POSTS = 1000;
const TARGETS = 3;

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.close();
});

describe('three herald worker processes on one Postgres', () => {
  it('publish a thousand due posts of three targets, each target exactly once, none left behind', async () => {
    const { userId } = await userWithKey(database.db);
    const accounts = [
      await account(database.db, userId, 'x', 'a'),
      await account(database.db, userId, 'linkedin', 'b'),
      await account(database.db, userId, 'threads', 'c'),
    ];
    // Due a second ago, as after a short outage: well within the lateness bound.
    const due = new Date(Date.now() - 1000);
    const posts = Array.from({ length: POSTS }, (_, i) => ({
      id: newId('post'),
      user_id: userId,
      caption: `post ${i}`,
      post_type: 'post',
      status: 'scheduled' as const,
      scheduled_at: due,
      next_check_at: due,
    }));
    for (let i = 0; i < POSTS; i += 250) {
      const chunk = posts.slice(i, i + 250);
      await database.db.insertInto('posts').values(chunk).execute();
      await database.db
        .insertInto('post_targets')
        .values(chunk.flatMap((p) => accounts.map((account_id, position) => ({ post_id: p.id, account_id, position, fields: null, thread_parts: null }))))
        .execute();
    }

    const env = { DATABASE_URL: database.url, HERALD_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'), HERALD_DATA_DIR: '/nonexistent-herald-data' };
    const results = await Promise.all([1, 2, 3].map(() => herald(['worker', '--once'], env)));
    const handled = results.map((r) => json<{ posts: number }>(r).posts);
    // Every post was taken by exactly one worker: the counts add up.
    expect(handled.reduce((a, b) => a + b, 0)).toBe(POSTS);

    const perTarget = await database.db
      .selectFrom('sandbox_outbox')
      .select(['account_id', sql<number>`count(*)::int`.as('n')])
      .groupBy('account_id')
      .orderBy('account_id')
      .execute();
    expect(perTarget).toEqual([...accounts].sort().map((account_id) => ({ account_id, n: POSTS })));
    const parts = await database.db
      .selectFrom('target_parts as p')
      .innerJoin('sandbox_outbox as o', 'o.platform_post_id', 'p.material_key')
      .select(sql<number>`count(*)::int`.as('n'))
      .executeTakeFirstOrThrow();
    expect(parts.n).toBe(POSTS * TARGETS);
    const left = await database.db.selectFrom('post_targets').select('state').where('state', '<>', 'published').execute();
    expect(left).toEqual([]);
    const statuses = await database.db
      .selectFrom('posts')
      .select(['status', sql<number>`count(*)::int`.as('n')])
      .groupBy('status')
      .execute();
    expect(statuses).toEqual([{ status: 'published', n: POSTS }]);
  }, 240_000);
});

describe('herald worker, running', () => {
  it('publishes a scheduled post when it comes due, and stops cleanly on SIGTERM', async () => {
    const { userId } = await userWithKey(database.db);
    const x = await account(database.db, userId, 'x', 'w');
    const scheduledAt = new Date(Date.now() + 1500);
    const { id } = await createPost(
      database.db,
      userId,
      { accountIds: [x], caption: 'on time', postType: 'post', scheduledAt: scheduledAt.toISOString() },
      new Date(),
    );
    const env = {
      DATABASE_URL: database.url,
      HERALD_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
      HERALD_DATA_DIR: '/nonexistent-herald-data',
      LOG_LEVEL: 'info',
    };
    const workers = [heraldSpawn(['worker'], env, 'pipe'), heraldSpawn(['worker'], env, 'pipe')];
    const logs = workers.map(() => '');
    workers.forEach((w, i) => w.stderr?.on('data', (chunk: Buffer) => (logs[i] += chunk.toString())));
    const exits = workers.map((w) => new Promise<number | null>((resolve) => w.once('exit', resolve)));
    // SIGTERM is for running workers: one still loading its modules has no handler yet and dies of it.
    for (const until = Date.now() + 30_000; !logs.every((l) => l.includes('worker started')) && Date.now() < until;)
      await new Promise((resolve) => setTimeout(resolve, 100));
    try {
      let status = '';
      for (const until = Date.now() + 30_000; status !== 'published' && Date.now() < until;) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        status = (await database.db.selectFrom('posts').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
      }
      expect(status).toBe('published');
      const target = await database.db.selectFrom('post_targets').select(['published_at', 'attempts']).where('post_id', '=', id).executeTakeFirstOrThrow();
      expect(target.attempts).toBe(1);
      expect(target.published_at!.getTime()).toBeGreaterThanOrEqual(scheduledAt.getTime());
      expect(await database.db.selectFrom('sandbox_outbox').select('text').where('account_id', '=', x).execute()).toEqual([{ text: 'on time' }]);
    } finally {
      for (const w of workers) w.kill('SIGTERM');
    }
    expect(await Promise.all(exits), logs.join('\n')).toEqual([0, 0]);
  }, 60_000);
});
