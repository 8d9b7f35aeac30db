/**
 * Benchmark: "newest 25 posts of one user" at 1,000,000 posts, as a ratio against the same query
 * at 10,000 posts measured in the same run. With the (user_id, created_at desc, id desc) index the
 * ratio stays near 1; a full scan and sort would grow with the table (about 100x).
 *
 *   npm run bench                      # embedded database, in memory
 *   DATABASE_URL=postgres://... npm run bench   # a scratch Postgres database (its posts are replaced)
 */
import { performance } from 'node:perf_hooks';
import { sql, type Kysely } from 'kysely';
import { openEmbedded, openPostgres, type DatabaseHandle } from '../src/data/database.js';
import { migrateToLatest } from '../src/data/migrate.js';
import { selectPostsPage } from '../src/data/queries/posts.js';
import type { Database } from '../src/data/schema.js';

const USERS = 100;
const SIZES = [10_000, 1_000_000];
const SAMPLES = 200;

async function fill(db: Kysely<Database>, posts: number): Promise<void> {
  await sql`truncate posts cascade`.execute(db);
  await sql`delete from users where id like 'usr_bench_%'`.execute(db);
  await sql`insert into users (id, name) select 'usr_bench_' || g, null from generate_series(1, ${USERS}) g`.execute(db);
  await sql`
    insert into posts (id, user_id, caption, post_type, status, created_at, updated_at)
    select 'post_bench_' || g, 'usr_bench_' || (1 + g % ${USERS}), 'caption ' || g, 'post', 'draft',
           now() - (g || ' seconds')::interval, now()
    from generate_series(1, ${posts}) g`.execute(db);
  await sql`analyze posts`.execute(db);
}

async function medianMs(db: Kysely<Database>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const user = `usr_bench_${1 + ((i * 7919) % USERS)}`;
    const start = performance.now();
    const rows = await selectPostsPage(db, user, 25, 0);
    times.push(performance.now() - start);
    if (rows.length !== 25) throw new Error(`expected 25 rows, got ${rows.length}`);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? Number.NaN;
}

async function plan(db: Kysely<Database>): Promise<string> {
  const { rows } = await sql<{ 'QUERY PLAN': string }>`
    explain select * from posts where user_id = 'usr_bench_1' order by created_at desc, id desc limit 25`.execute(db);
  return rows.map((r) => r['QUERY PLAN']).join(' / ');
}

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  const handle: DatabaseHandle = url ? openPostgres(url) : await openEmbedded();
  try {
    await migrateToLatest(handle.db);
    const results: { posts: number; ms: number }[] = [];
    for (const posts of SIZES) {
      await fill(handle.db, posts);
      const ms = await medianMs(handle.db);
      results.push({ posts, ms });
      console.log(`${handle.backend}: ${posts.toLocaleString('en')} posts: median ${ms.toFixed(3)} ms over ${SAMPLES} pages; plan: ${await plan(handle.db)}`);
    }
    const [baseline, large] = results;
    if (baseline && large) console.log(`ratio (1,000,000 / 10,000 posts): ${(large.ms / baseline.ms).toFixed(2)}x`);
    await sql`truncate posts cascade`.execute(handle.db);
    await sql`delete from users where id like 'usr_bench_%'`.execute(handle.db);
  } finally {
    await handle.close();
  }
}

await main();
