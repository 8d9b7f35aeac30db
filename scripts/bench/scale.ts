/**
 * `npm run bench -- --scale`: how Herald's costs grow with the data. Users with 10,000, 100,000
 * and 1,000,000 posts; for each, listPosts latency at offset 0, at a deep offset (90% of the way
 * down) and through a cursor at the same depth; and createPost throughput as the table grows.
 * Printed as growth ratios against the 10,000-post user, measured in the same run.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { encodePostCursor } from '../../src/domain/posts/post-cursor.js';
import { HERALD_COMMAND } from '../build.js';
import { startHeraldServe } from '../herald-serve.js';
import { REPO_ROOT } from '../spec-document.js';
import { percentile, runLoad, type RunResult } from './load.js';
import { affinity, pin, postgresProcesses } from './processes.js';
import { seed } from './seed.js';

const SIZES = [10_000, 100_000, 1_000_000];
const READ_SECONDS = 3;
const CREATE_SECONDS = 5;

interface Measured {
  posts: number;
  first: Latency;
  deep: Latency;
  cursor: Latency;
  create: RunResult;
}

interface Latency {
  p50: number;
  p99: number;
}

/** One request at a time for READ_SECONDS, each timed to the microsecond (autocannon counts whole milliseconds). */
async function sequentialLatency(url: string, key: string): Promise<Latency> {
  const times: number[] = [];
  for (const until = performance.now() + READ_SECONDS * 1000; performance.now() < until;) {
    const start = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    await res.arrayBuffer();
    times.push(performance.now() - start);
    if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`);
  }
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99) };
}

export async function runScale(databaseUrl: string, client: pg.Client): Promise<void> {
  const herald = await startHeraldServe(HERALD_COMMAND, {
    ...process.env,
    DATABASE_URL: databaseUrl,
    HERALD_RATE_LIMIT_PER_MINUTE: '100000000',
    HERALD_RATE_LIMIT_WRITES_PER_MINUTE: '100000000',
  });
  const backend = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid ?? 0;
  const postgres = postgresProcesses(backend).map((pid) => ({ pid, cores: affinity(pid) }));
  for (const pid of [herald.pid, ...postgres.map((p) => p.pid)]) pin(pid, '0');
  pin(process.pid, '1');
  const measured: Measured[] = [];
  try {
    for (const posts of SIZES) {
      console.log(`seeding a user with ${posts.toLocaleString('en')} posts…`);
      const user = await seed(client, `scale-${posts}`, posts, { contents: false });
      await client.query('analyze posts');
      const depth = Math.floor(posts * 0.9);
      const { rows } = await client.query<{ created_at: Date; id: string }>(
        'select created_at, id from posts where user_id = $1 order by created_at desc, id desc offset $2 limit 1',
        [user.userId, depth - 1],
      );
      const row = rows[0];
      if (row === undefined) throw new Error(`no post at depth ${depth}`);
      const cursor = encodePostCursor({ createdAt: row.created_at, id: row.id });
      const read = (path: string) => sequentialLatency(`${herald.url}${path}`, user.key);
      const first = await read('/api/v1/posts?limit=25');
      const deep = await read(`/api/v1/posts?limit=25&offset=${depth}`);
      const viaCursor = await read(`/api/v1/posts?limit=25&cursor=${encodeURIComponent(cursor)}`);
      const body = JSON.stringify({ accountIds: user.accountIds.slice(0, 3), caption: 'Growing', mediaIds: user.mediaIds.slice(0, 2) });
      const create = await runLoad(herald.url, user.key, { method: 'POST', paths: ['/api/v1/posts'], body }, 10, { seconds: CREATE_SECONDS });
      measured.push({ posts, first, deep, cursor: viaCursor, create });
    }
  } finally {
    for (const { pid, cores } of postgres) if (cores !== undefined) pin(pid, cores);
    await herald.stop();
  }
  const base = measured[0];
  if (base === undefined) return;
  const f = (n: number, digits = 2) => n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  const lines = [
    '| posts of the user | listPosts offset 0: p50 ms (growth) | deep offset (90%): p50 ms (growth) | cursor at the same depth: p50 ms (growth) | createPost req/s at 10 conns (growth) |',
    '|---|---|---|---|---|',
    ...measured.map(
      (m) =>
        `| ${m.posts.toLocaleString('en')} | ${f(m.first.p50)} (${f(m.first.p50 / base.first.p50)}×) | ${f(m.deep.p50)} (${f(m.deep.p50 / base.deep.p50)}×) | ${f(m.cursor.p50)} (${f(
          m.cursor.p50 / base.cursor.p50,
        )}×) | ${f(m.create.requestsPerSecond, 0)} (${f(m.create.requestsPerSecond / base.create.requestsPerSecond)}×) |`,
    ),
    '',
    `Reads one at a time for ${READ_SECONDS} s each; createPost for ${CREATE_SECONDS} s at 10 connections, on a posts table that holds every earlier row too. Server and Postgres on core 0, load on core 1.`,
  ];
  const table = lines.join('\n');
  console.log(`\n${table}`);
  await mkdir(join(REPO_ROOT, 'bench/results'), { recursive: true });
  await writeFile(join(REPO_ROOT, 'bench/results/scale.md'), `# npm run bench -- --scale, ${new Date().toISOString().slice(0, 10)}\n\n${table}\n`);
}
