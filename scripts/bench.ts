/**
 * `npm run bench`: Herald on Postgres against a hand-written baseline (scripts/bench/baseline-server.ts)
 * doing the same work on the same database, in one run. Seeds a scratch database (one user with
 * 100,000 posts of 3 targets and 2 media, 1,000 other users with 5 accounts and 20 media each),
 * checks that both servers give the same answers, then drives createPost, listPosts, getPost,
 * deletePost and listAccounts at 10 and 50 connections, Herald and the baseline taking turns
 * (PAIRS pairs, the first to go alternating), and prints the medians as ratios. The servers and
 * Postgres are pinned to core 0 and the load generator (this process) to core 1 where taskset
 * works. The table goes to bench/results/latest.md.
 *
 *   npm run bench                        # 5 pairs of 5 s runs per operation and connection count
 *   npm run bench -- --seconds 10 --pairs 5
 *   npm run bench -- --only getPost --connections 50 --pairs 9   # one row, more pairs
 *   npm run bench -- --scale             # scripts/bench/scale.ts: growth with the number of posts
 *
 * BENCH_DATABASE_URL names the Postgres server (default the local one on 127.0.0.1) on which a
 * scratch database is created and dropped.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import pg from 'pg';
import { openPostgres } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { HERALD_COMMAND, buildHerald } from './build.js';
import { startHeraldServe, type ServeProcess } from './herald-serve.js';
import { median, runLoad, type LoadRequest, type RunResult } from './bench/load.js';
import { affinity, pin, postgresProcesses, residentMb, startBaseline, type Child } from './bench/processes.js';
import { runScale } from './bench/scale.js';
import { seed, seedDeletable, seedOthers, type Seeded } from './bench/seed.js';
import { REPO_ROOT } from './spec-document.js';

const { values: args } = parseArgs({
  options: {
    scale: { type: 'boolean', default: false },
    seconds: { type: 'string', default: '5' },
    /** Five rather than three: on a shared machine the speed of a core swings by a fifth from one moment to the next. */
    pairs: { type: 'string', default: '5' },
    /** Only the operations whose name starts with this (a partial table; it still goes to latest.md). */
    only: { type: 'string' },
    /** Only this connection count. */
    connections: { type: 'string' },
  },
});
const SECONDS = Number(args.seconds);
const PAIRS = Number(args.pairs);
const ADMIN_URL = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const MAIN_USER_POSTS = 100_000;
const CONNECTIONS = args.connections === undefined ? [10, 50] : [Number(args.connections)];
/**
 * deletePost uses up its posts, so each of its runs gets this many, seeded just before: more than
 * it can delete in the run's seconds (a run that ran out would answer 404 and fail).
 */
const DELETABLE_PER_SECOND = 5000;
const WARM_UP_SECONDS = 1;
const SERVER_CORE = '0';
const LOAD_CORE = '1';
/** Herald as users run it, with its rate limits on but set above what the load sends. */
const HERALD_ENV = {
  HERALD_RATE_LIMIT_PER_MINUTE: '100000000',
  HERALD_RATE_LIMIT_WRITES_PER_MINUTE: '100000000',
  HERALD_RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000000',
};

interface Operation {
  name: string;
  /** Throughput the target asks of Herald, as a share of the baseline's. */
  target: number;
  request(seeded: Seeded, run: string): LoadRequest | Promise<LoadRequest>;
  limit: { seconds: number };
}

async function createScratchDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `herald_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const again = new pg.Client({ connectionString: ADMIN_URL });
      await again.connect();
      await again.query(`drop database if exists ${name} with (force)`);
      await again.end();
    },
  };
}

export async function migrate(url: string): Promise<void> {
  const handle = openPostgres(url);
  try {
    await migrateToLatest(handle.db);
  } finally {
    await handle.close();
  }
}

async function get(url: string, key: string): Promise<unknown> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  if (!response.ok) throw new Error(`GET ${url}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** Both servers must answer the reads alike, or the comparison would not be of the same work. */
async function checkSameAnswers(herald: string, baseline: string, seeded: Seeded): Promise<void> {
  for (const path of ['/api/v1/posts?limit=25', `/api/v1/posts/${seeded.postIds[3]}`, `/api/v1/posts/${seeded.postIds[8]}`, '/api/v1/accounts']) {
    const [a, b] = await Promise.all([get(herald + path, seeded.key), get(baseline + path, seeded.key)]);
    if (!isDeepStrictEqual(a, b)) throw new Error(`Herald and the baseline answer ${path} differently:\n${JSON.stringify(a)}\n${JSON.stringify(b)}`);
  }
}

function operations(client: pg.Client): Operation[] {
  return [
    { name: 'listPosts (limit 25)', target: 0.85, limit: { seconds: SECONDS }, request: () => ({ method: 'GET', paths: ['/api/v1/posts?limit=25'] }) },
    {
      name: 'getPost (3 targets, 2 media)',
      target: 0.85,
      limit: { seconds: SECONDS },
      request: (s) => ({ method: 'GET', paths: s.postIds.map((id) => `/api/v1/posts/${id}`) }),
    },
    { name: 'listAccounts (3 own, 2 of an org)', target: 0.85, limit: { seconds: SECONDS }, request: () => ({ method: 'GET', paths: ['/api/v1/accounts'] }) },
    {
      name: 'createPost (3 accounts, 2 media, 1 override)',
      target: 0.75,
      limit: { seconds: SECONDS },
      request: (s) => ({
        method: 'POST',
        paths: ['/api/v1/posts'],
        body: JSON.stringify({
          accountIds: s.accountIds.slice(0, 3),
          caption: 'Our spring release is out: faster pages, scheduled threads and a new API reference. https://example.com/releases/spring',
          mediaIds: s.mediaIds.slice(0, 2),
          accountOverrides: [{ accountId: s.accountIds[0], captionOverride: 'Spring release: https://example.com/releases/spring' }],
        }),
      }),
    },
    {
      name: 'deletePost (draft, 3 targets, 2 media)',
      target: 0.75,
      limit: { seconds: SECONDS },
      request: async (s, run) => ({
        method: 'DELETE',
        paths: (await seedDeletable(client, s, run, DELETABLE_PER_SECOND * SECONDS)).map((id) => `/api/v1/posts/${id}`),
      }),
    },
  ];
}

interface Row {
  operation: string;
  connections: number;
  target: number;
  herald: RunResult[];
  baseline: RunResult[];
}

function formatTable(rows: Row[], rss: { peak: number; first: number; last: number }, pinned: boolean): string {
  const f = (n: number, digits = 0) => n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  const lines = [
    '| operation | conns | Herald req/s | baseline req/s | ratio (target) | Herald p50 / p99 ms | baseline p50 / p99 ms | p99 ratio (≤ 1.3) |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const row of rows) {
    const h = { rps: median(row.herald.map((r) => r.requestsPerSecond)), p50: median(row.herald.map((r) => r.p50)), p99: median(row.herald.map((r) => r.p99)) };
    const b = {
      rps: median(row.baseline.map((r) => r.requestsPerSecond)),
      p50: median(row.baseline.map((r) => r.p50)),
      p99: median(row.baseline.map((r) => r.p99)),
    };
    const ratio = h.rps / b.rps;
    const p99Ratio = h.p99 / b.p99;
    lines.push(
      `| ${row.operation} | ${row.connections} | ${f(h.rps)} | ${f(b.rps)} | ${f(ratio, 2)} ${ratio >= row.target ? '✓' : '✗'} (≥ ${row.target}) | ${f(h.p50, 1)} / ${f(h.p99, 1)} | ${f(b.p50, 1)} / ${f(b.p99, 1)} | ${f(p99Ratio, 2)} ${p99Ratio <= 1.3 ? '✓' : '✗'} |`,
    );
  }
  lines.push(
    '',
    `Herald's resident memory: peak ${f(rss.peak)} MB (target < 200); ${f(rss.first)} MB after its first run, ${f(rss.last)} MB after its last.`,
    `Medians of ${PAIRS} alternating pairs of ${SECONDS} s runs; ${
      pinned ? `servers and Postgres on core ${SERVER_CORE}, load on core ${LOAD_CORE}` : 'not pinned (taskset unavailable)'
    }; ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}.`,
  );
  return lines.join('\n');
}

async function main(): Promise<void> {
  const database = await createScratchDatabase();
  const client = new pg.Client({ connectionString: database.url });
  const restore: { pid: number; cores: string }[] = [];
  let herald: ServeProcess | undefined;
  let baseline: Child | undefined;
  try {
    await migrate(database.url);
    await client.connect();
    console.log('seeding: 1,000 other users, and one with 100,000 posts of 3 targets…');
    await seedOthers(client);
    const seeded = await seed(client, 'main', MAIN_USER_POSTS);
    // Vacuumed now, or autovacuum would take the database's core in the middle of some run.
    await client.query('vacuum analyze');
    await buildHerald();

    if (args.scale) {
      await runScale(database.url, client);
      return;
    }
    herald = await startHeraldServe(HERALD_COMMAND, { ...process.env, ...HERALD_ENV, DATABASE_URL: database.url });
    baseline = await startBaseline(database.url);
    const backend = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid ?? 0;
    for (const pid of [...postgresProcesses(backend), herald.pid, baseline.pid]) {
      const cores = affinity(pid);
      if (cores !== undefined) restore.push({ pid, cores });
    }
    const pinned = [herald.pid, baseline.pid, ...postgresProcesses(backend)].every((pid) => pin(pid, SERVER_CORE)) && pin(process.pid, LOAD_CORE);
    await checkSameAnswers(herald.url, baseline.url, seeded);

    const rows: Row[] = [];
    const heraldRss: number[] = [];
    let runs = 0;
    for (const op of operations(client).filter((o) => args.only === undefined || o.name.startsWith(args.only))) {
      for (const connections of CONNECTIONS) {
        const row: Row = { operation: op.name, connections, target: op.target, herald: [], baseline: [] };
        for (const server of [herald, baseline]) {
          const warmUp = await op.request(seeded, `warm-${runs++}`);
          await runLoad(server.url, seeded.key, warmUp, connections, { seconds: WARM_UP_SECONDS });
        }
        for (let pair = 0; pair < PAIRS; pair++) {
          const order = pair % 2 === 0 ? (['herald', 'baseline'] as const) : (['baseline', 'herald'] as const);
          for (const which of order) {
            const server = which === 'herald' ? herald : baseline;
            const result = await runLoad(server.url, seeded.key, await op.request(seeded, `run-${runs++}`), connections, op.limit);
            row[which].push(result);
            if (which === 'herald') heraldRss.push(residentMb(herald.pid).now);
          }
        }
        rows.push(row);
        const last = (rs: RunResult[]) => median(rs.map((r) => r.requestsPerSecond)).toFixed(0);
        console.log(`${op.name} at ${connections}: Herald ${last(row.herald)} req/s, baseline ${last(row.baseline)} req/s`);
      }
    }
    const table = formatTable(rows, { peak: residentMb(herald.pid).peak, first: heraldRss[0] ?? 0, last: heraldRss.at(-1) ?? 0 }, pinned);
    console.log(`\n${table}`);
    await mkdir(join(REPO_ROOT, 'bench/results'), { recursive: true });
    await writeFile(join(REPO_ROOT, 'bench/results/latest.md'), `# npm run bench, ${new Date().toISOString().slice(0, 10)}\n\n${table}\n`);
  } finally {
    for (const { pid, cores } of restore) pin(pid, cores);
    await herald?.stop();
    await baseline?.stop();
    await client.end().catch(() => {});
    await database.drop();
  }
}

await main();
