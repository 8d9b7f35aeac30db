/**
 * Benchmark: the publishing road on sandbox accounts.
 *
 * 1. Latency: posts scheduled a few seconds ahead, published by the in-process worker `herald
 *    serve` runs; how long after `scheduledAt` each target is recorded published, as a ratio
 *    against publishing an already-due post (the work itself, measured in the same run); and how
 *    long after each post.published event was recorded a webhook receiver on 127.0.0.1 had it.
 * 2. Throughput (Postgres only, with DATABASE_URL): a backlog of 10,000 posts of 3 targets made
 *    due at once, drained by one, two and four running `herald worker` processes.
 * 3. Steady state (Postgres only): one running `herald worker` while posts of 3 targets come due
 *    at a fixed rate for 20 s (BENCH_STEADY_RATES, posts/s, default 50 and 200): the delay from
 *    each post's scheduledAt to its last target recorded published, p50 and p99.
 * 4. Idle (Postgres only): the CPU an idle `herald serve` (with its in-process worker) and
 *    Postgres use over 20 s, from 25 s after it started, as a share of one core.
 *
 *   npm run bench:publishing                               # latency, embedded PostgreSQL in a scratch folder
 *   DATABASE_URL=postgres://.../scratch npm run bench:publishing   # all (the database is emptied)
 *   BENCH_SKIP_THROUGHPUT=true BENCH_STEADY_RATES=25 DATABASE_URL=... npm run bench:publishing   # no backlog runs; steady state at 25 posts/s
 *   BENCH_WORKERS=1,4 BENCH_BACKLOG=40000 BENCH_STEADY_RATES= DATABASE_URL=... npm run bench:publishing   # 1 and 4 workers on a backlog of 40,000; no steady runs
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { readEnvironment } from '../src/cli/wiring/configuration.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { openDatabase } from '../src/db/open-database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import type { Database } from '../src/db/schema.js';
import { connectAccount } from '../src/domain/accounts.js';
import { newId } from '../src/domain/ids.js';
import { createPost } from '../src/domain/posts/create-post.js';
import { publishNextDuePost } from '../src/domain/publishing/publication.js';
import { createUser } from '../src/domain/users.js';
import { createWebhook } from '../src/domain/webhooks/endpoints.js';
import { createDependencies } from '../src/cli/wiring/dependencies.js';
import { startWorker } from '../src/worker/worker.js';
import { HERALD_COMMAND, buildHerald } from './build.js';
import { percentile } from './bench/load.js';
import { cpuSeconds, machineBusySeconds, postgresProcesses } from './bench/processes.js';
import { startHeraldServe } from './herald-serve.js';

const LATENCY_POSTS = 40;
/** The backlog of the throughput runs (BENCH_BACKLOG, default 10,000). */
const THROUGHPUT_POSTS = Number(process.env.BENCH_BACKLOG ?? 10_000);
/** The worker counts of the throughput runs (BENCH_WORKERS, default 1,2,4); the first is the baseline of the ratios. */
const THROUGHPUT_WORKERS = (process.env.BENCH_WORKERS ?? '1,2,4').split(',').map(Number);
const STEADY_SECONDS = 20;
/** How long after the last post came due a steady run waits for it to be published. */
const STEADY_GRACE_MS = 30_000;
const STEADY_RATES = (process.env.BENCH_STEADY_RATES ?? '50,200').split(',').filter(Boolean).map(Number);
const quiet = { info: () => {}, error: () => {} };

async function sandboxUser(db: Kysely<Database>): Promise<{ userId: string; accounts: string[] }> {
  const { id: userId } = await createUser(db, 'Bench');
  const accounts: string[] = [];
  for (const platform of ['x', 'linkedin', 'threads'])
    accounts.push((await connectAccount(db, { platform, username: 'bench', displayName: null, owner: { userId } })).id);
  return { userId, accounts };
}

async function latency(handle: DatabaseHandle, dataDir: string): Promise<void> {
  const { db } = handle;
  const env = readEnvironment({ HERALD_DATA_DIR: dataDir, HERALD_SECRET_KEY: randomBytes(32).toString('base64'), HERALD_ALLOW_PRIVATE_NETWORK: 'true' });
  const deps = await createDependencies(env, db, quiet);
  const { userId, accounts } = await sandboxUser(db);
  const receiver = await startReceiver();

  // Baseline: the work of publishing one due post of three targets, with no waiting for a wake-up.
  const baseline: number[] = [];
  for (let i = 0; i < 10; i++) {
    await createPost(
      db,
      userId,
      { accountIds: accounts, caption: `due ${i}`, postType: 'post', scheduledAt: new Date(Date.now() + 50).toISOString() },
      new Date(),
    );
    await new Promise((resolve) => setTimeout(resolve, 60));
    const start = performance.now();
    await publishNextDuePost(deps);
    baseline.push(performance.now() - start);
  }

  // Subscribed after the baseline, so only the scheduled posts' events are timed.
  await createWebhook(deps, userId, { url: receiver.url, eventTypes: ['post.published'] }, new Date());
  const worker = await startWorker(deps, env.workerConcurrency, handle);
  const first = Date.now() + 3000;
  const ids: string[] = [];
  for (let i = 0; i < LATENCY_POSTS; i++) {
    const at = new Date(first + i * 150).toISOString();
    ids.push((await createPost(db, userId, { accountIds: accounts, caption: `scheduled ${i}`, postType: 'post', scheduledAt: at }, new Date())).id);
  }
  for (const until = Date.now() + 60_000; Date.now() < until;) {
    const left = await db.selectFrom('posts').select('id').where('id', 'in', ids).where('status', '<>', 'published').execute();
    if (left.length === 0 && receiver.lags.length >= ids.length) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await receiver.close();
  const rows = await db
    .selectFrom('post_targets as t')
    .innerJoin('posts as p', 'p.id', 't.post_id')
    .select(['t.published_at', 'p.scheduled_at'])
    .where('p.id', 'in', ids)
    .execute();
  await worker.stop();
  const lags = rows.map((r) => (r.published_at?.getTime() ?? Number.NaN) - (r.scheduled_at?.getTime() ?? Number.NaN));
  const work = percentile(baseline, 0.5);
  console.log(`publishing one due post of 3 targets (baseline): median ${work.toFixed(1)} ms`);
  console.log(
    `in-process worker, ${rows.length} targets of ${LATENCY_POSTS} scheduled posts: published after scheduledAt by p50 ${percentile(lags, 0.5).toFixed(0)} ms, p99 ${percentile(lags, 0.99).toFixed(0)} ms, max ${Math.max(...lags).toFixed(0)} ms (${(percentile(lags, 0.5) / work).toFixed(1)}x the baseline)`,
  );
  const hooks = receiver.lags;
  console.log(
    `webhooks, ${hooks.length} post.published events: received after the outcome was recorded by median ${percentile(hooks, 0.5).toFixed(0)} ms, p95 ${percentile(hooks, 0.95).toFixed(0)} ms, max ${Math.max(...hooks).toFixed(0)} ms`,
  );
}

/** A receiver on 127.0.0.1 that notes how long after each event's timestamp it arrived. */
async function startReceiver(): Promise<{ url: string; lags: number[]; close(): Promise<void> }> {
  const lags: number[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      lags.push(Date.now() - Date.parse((JSON.parse(body) as { timestamp: string }).timestamp));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, lags, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** `workers` running `herald worker` processes, once each listens; `stop` ends them (SIGTERM) and waits. */
async function startWorkers(db: Kysely<Database>, workers: number, env: Record<string, string>): Promise<{ pids: number[]; stop(): Promise<void> }> {
  const children = Array.from({ length: workers }, () =>
    spawn(process.execPath, [...HERALD_COMMAND, 'worker'], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: 'ignore' }),
  );
  const exits = children.map((child) => new Promise((resolve) => child.once('exit', resolve)));
  const stop = async () => {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(exits);
  };
  try {
    // Listening: each hears work as it is written, and looks for it when it comes due.
    for (const until = Date.now() + 30_000; ;) {
      const listening = await sql<{
        n: number;
      }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and query ilike 'listen%'`.execute(db);
      if ((listening.rows[0]?.n ?? 0) >= workers) break;
      if (Date.now() > until) throw new Error(`${workers} herald worker processes did not listen within 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { pids: children.flatMap((child) => child.pid ?? []), stop };
}

/** Waits (at most `ms`) until every post of the user is published. */
async function untilPublished(db: Kysely<Database>, userId: string, ms: number): Promise<void> {
  for (const until = Date.now() + ms; Date.now() < until;) {
    const left = await db.selectFrom('posts').select('id').where('user_id', '=', userId).where('status', '<>', 'published').limit(1).execute();
    if (left.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** `count` sandbox posts of 3 targets, scheduled at `dueAt(i)`, written in bulk (no API, no per-post statement). */
async function insertPosts(db: Kysely<Database>, count: number, dueAt: (i: number) => Date): Promise<string> {
  const { userId, accounts } = await sandboxUser(db);
  for (let i = 0; i < count; i += 1000) {
    const posts = Array.from({ length: Math.min(1000, count - i) }, (_, j) => {
      const due = dueAt(i + j);
      return {
        id: newId('post'),
        user_id: userId,
        caption: `bulk ${i + j}`,
        post_type: 'post',
        status: 'scheduled' as const,
        scheduled_at: due,
        next_check_at: due,
      };
    });
    await db.insertInto('posts').values(posts).execute();
    await db
      .insertInto('post_targets')
      .values(posts.flatMap((p) => accounts.map((account_id, position) => ({ post_id: p.id, account_id, position, fields: null, thread_parts: null }))))
      .execute();
  }
  return userId;
}

/** Every post of the user published (or throws). */
async function checkPublished(db: Kysely<Database>, userId: string): Promise<void> {
  const left = await db.selectFrom('posts').select('id').where('user_id', '=', userId).where('status', '<>', 'published').execute();
  if (left.length > 0) throw new Error(`${left.length} posts left unpublished`);
}

/** The posts and what they published gone, and the tables vacuumed, so each run starts on tables alike. */
async function clear(db: Kysely<Database>): Promise<void> {
  await sql`truncate posts, sandbox_outbox, webhook_events cascade`.execute(db);
  await sql`vacuum analyze`.execute(db);
}

/**
 * A backlog drained by running workers: the posts are written not yet due, the workers started,
 * and then one statement makes all of them due at once (as after an outage), so what is timed is
 * publishing, from that commit to the last target recorded published, not the processes' start-up.
 */
async function throughput(db: Kysely<Database>, env: Record<string, string>): Promise<void> {
  const results: number[] = [];
  for (const workers of THROUGHPUT_WORKERS) {
    const due = new Date(Date.now() - 1000);
    const userId = await insertPosts(db, THROUGHPUT_POSTS, () => due);
    await db.updateTable('posts').set({ next_check_at: null }).where('user_id', '=', userId).execute();
    // Posts written over days before an outage have been analysed by autovacuum; these, written in a second, not yet.
    await sql`vacuum analyze posts, post_targets`.execute(db);
    const running = await startWorkers(db, workers, env);
    let seconds: number;
    let cpu = '';
    try {
      const workersCpu = () => running.pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
      const [workersBefore, machineBefore] = [workersCpu(), machineBusySeconds()];
      const start = Date.now();
      await db.updateTable('posts').set({ next_check_at: due }).where('user_id', '=', userId).execute();
      await untilPublished(db, userId, 900_000);
      const [workersSpent, machineSpent] = [workersCpu() - workersBefore, machineBusySeconds() - machineBefore];
      cpu = `CPU per 1,000 posts: workers ${((workersSpent * 1000) / THROUGHPUT_POSTS).toFixed(2)} s, rest of the machine (Postgres) ${(((machineSpent - workersSpent) * 1000) / THROUGHPUT_POSTS).toFixed(2)} s`;
      const last = await db
        .selectFrom('post_targets as t')
        .innerJoin('posts as p', 'p.id', 't.post_id')
        .select((eb) => eb.fn.max('t.published_at').as('at'))
        .where('p.user_id', '=', userId)
        .executeTakeFirstOrThrow();
      seconds = ((last.at?.getTime() ?? Number.NaN) - start) / 1000;
    } finally {
      await running.stop();
    }
    await checkPublished(db, userId);
    await clear(db);
    results.push(THROUGHPUT_POSTS / seconds);
    console.log(
      `${workers} herald worker: ${THROUGHPUT_POSTS} posts x 3 targets in ${seconds.toFixed(1)} s: ${(THROUGHPUT_POSTS / seconds).toFixed(0)} posts/s; ${cpu}`,
    );
  }
  const base = results[0] ?? Number.NaN;
  console.log(
    `scaling: ${THROUGHPUT_WORKERS.slice(1)
      .map((workers, i) => `${workers} workers ${((results[i + 1] ?? Number.NaN) / base).toFixed(2)}x`)
      .join(', ')} ${THROUGHPUT_WORKERS[0]} worker's posts/s`,
  );
}

/** One running `herald worker`, posts coming due at `rate` a second: how long after scheduledAt each is published. */
async function steady(db: Kysely<Database>, env: Record<string, string>, rate: number): Promise<void> {
  const running = await startWorkers(db, 1, env);
  try {
    const count = rate * STEADY_SECONDS;
    const first = Date.now() + 2000;
    const userId = await insertPosts(db, count, (i) => new Date(first + (i * 1000) / rate));
    await untilPublished(db, userId, first + STEADY_SECONDS * 1000 + STEADY_GRACE_MS - Date.now());
    const rows = await db
      .selectFrom('posts as p')
      .innerJoin('post_targets as t', 't.post_id', 'p.id')
      // A post is published when its last target is; null while any is not.
      .select(['p.scheduled_at', sql<Date | null>`case when count(t.published_at) = count(*) then max(t.published_at) end`.as('published_at')])
      .where('p.user_id', '=', userId)
      .groupBy('p.id')
      .execute();
    // A post not yet published counts as published now: its delay is at least that.
    const delays = rows.map((r) => (r.published_at?.getTime() ?? Date.now()) - (r.scheduled_at?.getTime() ?? Number.NaN));
    const left = rows.filter((r) => r.published_at === null).length;
    await clear(db);
    console.log(
      `steady state, 1 herald worker, ${rate} posts/s x 3 targets for ${STEADY_SECONDS} s (${count} posts): published after scheduledAt by p50 ${percentile(delays, 0.5).toFixed(0)} ms, p99 ${percentile(delays, 0.99).toFixed(0)} ms, max ${Math.max(...delays).toFixed(0)} ms${left > 0 ? `; NOT HELD: ${left} posts unpublished ${STEADY_GRACE_MS / 1000} s after the last came due` : ''}`,
    );
  } finally {
    await running.stop();
  }
}

const IDLE_SECONDS = 20;
const IDLE_SETTLE_MS = 25_000;

/** An idle service should cost nothing: no busy polling in Herald, and none it causes in Postgres. */
async function idle(db: Kysely<Database>, url: string): Promise<void> {
  const service = await startHeraldServe(HERALD_COMMAND, {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: url,
    HERALD_SECRET_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
  });
  try {
    // Past start-up's tail first: V8's memory reducer collects what starting made about 16 s in.
    await new Promise((resolve) => setTimeout(resolve, IDLE_SETTLE_MS));
    // Every Postgres process but the backends of other databases: the postmaster, its background
    // processes and the service's connections (long-lived; an idle service opens none).
    const others = (
      await sql<{
        pid: number;
      }>`select pid from pg_stat_activity where datname is distinct from current_database() and backend_type = 'client backend'`.execute(db)
    ).rows.map((r) => r.pid);
    const backend = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]?.pid ?? 0;
    const watched = postgresProcesses(backend).filter((pid) => !others.includes(pid) && pid !== backend);
    const start = new Map(watched.map((pid) => [pid, cpuSeconds(pid)]));
    const heraldStart = cpuSeconds(service.pid);
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    const herald = (cpuSeconds(service.pid) - heraldStart) / IDLE_SECONDS;
    // A process that ended meanwhile is left out (its time is gone with it).
    const pg = [...start].reduce((sum, [pid, was]) => sum + (existsSync(`/proc/${pid}`) ? cpuSeconds(pid) - was : 0), 0) / IDLE_SECONDS;
    console.log(
      `idle herald serve (in-process worker) over ${IDLE_SECONDS} s: Herald ${(herald * 100).toFixed(2)}% of a core, Postgres ${(pg * 100).toFixed(2)}% (1 tick = 0.05% here)`,
    );
  } finally {
    await service.stop();
  }
}

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-'));
  // Without a URL, the embedded PostgreSQL in the scratch folder (searchable by the user postgres, who runs it under root).
  chmodSync(dataDir, 0o711);
  const handle = await openDatabase({ databaseUrl: url || undefined, dataDir });
  try {
    await migrateToLatest(handle.db);
    if (url) await sql`truncate posts, users, accounts, sandbox_outbox cascade`.execute(handle.db);
    await latency(handle, dataDir);
    if (url) {
      await buildHerald();
      const env = { DATABASE_URL: url, HERALD_SECRET_KEY: randomBytes(32).toString('base64'), HERALD_DATA_DIR: tmpdir(), LOG_LEVEL: 'silent' };
      await clear(handle.db);
      if (process.env.BENCH_SKIP_THROUGHPUT !== 'true') await throughput(handle.db, env);
      for (const rate of STEADY_RATES) await steady(handle.db, env, rate);
      await idle(handle.db, url);
    } else console.log('throughput: set DATABASE_URL to a scratch Postgres database to measure several worker processes');
  } finally {
    await handle.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
