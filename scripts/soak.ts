/**
 * Soak: mixed traffic against `herald serve` and two `herald worker` processes on a Postgres of
 * the script's own (initdb in a temporary folder, 127.0.0.1 only), for a fixed time, while that
 * Postgres is restarted once and a worker is killed once. Then a consistency check in SQL: every
 * post acknowledged with 201 (and not deleted) is there with its three targets, each published
 * exactly once; nothing else exists.
 *
 *   npm run soak                  # 60 s, 8 clients
 *   npm run soak -- --seconds 120 --clients 16
 *
 * Needs PostgreSQL's server binaries (Debian: /usr/lib/postgresql/<version>/bin); as root, the
 * server runs as the `postgres` user. Exits 1 when a check fails.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { HERALD_COMMAND, buildHerald } from './build.js';
import { startHeraldServe, type ServeProcess } from './herald-serve.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '60' }, clients: { type: 'string', default: '8' } } });
const SECONDS = Number(values.seconds);
const CLIENTS = Number(values.clients);
/** No request waits longer than this; the whole script is bounded by the load time plus a few minutes. */
const REQUEST_TIMEOUT_MS = 15_000;
const SETTLE_TIMEOUT_MS = 120_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A throwaway PostgreSQL server: its own folder, its own port, restartable without touching any other. */
class PrivatePostgres {
  readonly dir = mkdtempSync(join(tmpdir(), 'herald-soak-pg-'));
  readonly bin: string;
  port = 0;
  constructor() {
    const root = '/usr/lib/postgresql';
    const version = existsSync(root) ? readdirSync(root).sort().pop() : undefined;
    if (version === undefined) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql');
    this.bin = join(root, version, 'bin');
    // The server refuses to run as root.
    if (process.getuid?.() === 0)
      chownSync(this.dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
  }
  private run(tool: string, args: string[]): void {
    const command = join(this.bin, tool);
    if (process.getuid?.() === 0) execFileSync('runuser', ['-u', 'postgres', '--', command, ...args], { stdio: 'ignore' });
    else execFileSync(command, args, { stdio: 'ignore' });
  }
  async init(): Promise<void> {
    this.port = await freePort();
    this.run('initdb', ['-D', join(this.dir, 'data'), '-A', 'trust', '-U', 'postgres']);
  }
  start(): void {
    this.run('pg_ctl', [
      '-D',
      join(this.dir, 'data'),
      '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c max_connections=200`,
      '-l',
      join(this.dir, 'log'),
      '-w',
      'start',
    ]);
  }
  stop(): void {
    this.run('pg_ctl', ['-D', join(this.dir, 'data'), '-m', 'fast', '-w', 'stop']);
  }
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }
  remove(): void {
    try {
      this.stop();
    } catch {
      // Already stopped.
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function cli(args: string[], env: Record<string, string>): Record<string, string> {
  return JSON.parse(execFileSync(process.execPath, [...HERALD_COMMAND, ...args], { env: { ...process.env, ...env } }).toString()) as Record<string, string>;
}

function startWorker(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [...HERALD_COMMAND, 'worker'], { env: { ...process.env, ...env }, stdio: 'ignore' });
}

interface Tally {
  sent: number;
  byStatus: Map<string, number>;
  fiveHundreds: string[];
  slowestMs: number;
}

async function main(): Promise<void> {
  const postgres = new PrivatePostgres();
  const children: ChildProcess[] = [];
  let serve: ServeProcess | undefined;
  const cleanup = () => {
    for (const child of children) child.kill('SIGKILL');
    void serve?.stop();
    postgres.remove();
  };
  process.once('SIGINT', () => {
    cleanup();
    process.exit(130);
  });
  try {
    await buildHerald();
    await postgres.init();
    postgres.start();
    const env: Record<string, string> = {
      DATABASE_URL: postgres.url(),
      HERALD_DATA_DIR: join(postgres.dir, 'herald'),
      HERALD_SECRET_KEY: Buffer.alloc(32, 9).toString('base64'),
      LOG_LEVEL: 'silent',
      HERALD_WORKER: 'false',
      // A killed worker's posts are taken over when their lease ends: 15 s here instead of 5 minutes.
      HERALD_PUBLISH_LEASE_SECONDS: '15',
      HERALD_RATE_LIMIT_PER_MINUTE: '1000000',
      HERALD_RATE_LIMIT_WRITES_PER_MINUTE: '1000000',
      HERALD_RATE_LIMIT_ANONYMOUS_PER_MINUTE: '1000000',
    };
    cli(['db', 'migrate'], env);
    const userId = cli(['user', 'create', '--name', 'Soak'], env).id ?? '';
    const accounts = ['x', 'linkedin', 'threads'].map(
      (platform) => cli(['account', 'connect', '--platform', platform, '--username', 'soak', '--user', userId], env).id ?? '',
    );
    const key = cli(['key', 'create', '--user', userId], env).key ?? '';
    serve = await startHeraldServe(HERALD_COMMAND, { ...process.env, ...env } as Record<string, string>);
    children.push(startWorker(env), startWorker(env));

    const tally: Tally = { sent: 0, byStatus: new Map(), fiveHundreds: [], slowestMs: 0 };
    const acknowledged = new Set<string>();
    const deleted = new Set<string>();
    const call = async (method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<{ status: number; body: { id?: string } }> => {
      const started = Date.now();
      tally.sent++;
      let status = 0;
      let text = '';
      try {
        const res = await fetch(`${serve?.url}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${key}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        status = res.status;
        text = await res.text();
      } catch (err) {
        text = err instanceof Error ? err.name : 'error';
      }
      tally.slowestMs = Math.max(tally.slowestMs, Date.now() - started);
      const label = status === 0 ? `no answer (${text})` : String(status);
      tally.byStatus.set(label, (tally.byStatus.get(label) ?? 0) + 1);
      if (status >= 500 && status !== 503) tally.fiveHundreds.push(`${method} ${path} ${status} ${text.slice(0, 200)}`);
      return { status, body: status >= 200 && status < 300 ? (JSON.parse(text) as { id?: string }) : {} };
    };
    /** Sends with one Idempotency-Key until the answer is final, as a client following the spec does. */
    const keyed = async (method: string, path: string, body?: unknown) => {
      const idempotencyKey = randomUUID();
      for (const until = Date.now() + 60_000; Date.now() < until; await sleep(250)) {
        const res = await call(method, path, body, idempotencyKey);
        if (res.status !== 0 && res.status !== 409 && res.status !== 503) return res;
      }
      throw new Error(`${method} ${path}: no final answer in 60 s`);
    };

    const end = Date.now() + SECONDS * 1000;
    const client = async (n: number) => {
      for (let i = 0; Date.now() < end; i++) {
        const draft = i % 4 === 3;
        const body = { accountIds: accounts, caption: `soak ${n}.${i}`, ...(draft ? {} : { scheduledAt: new Date(Date.now() + 20_000).toISOString() }) };
        const created = await keyed('POST', '/api/v1/posts', body);
        if (created.status === 201 && created.body.id !== undefined) acknowledged.add(created.body.id);
        if (draft && created.body.id !== undefined) {
          for (const until = Date.now() + 60_000; Date.now() < until; await sleep(250)) {
            const res = await call('DELETE', `/api/v1/posts/${created.body.id}`);
            if (res.status === 200 || res.status === 404) {
              deleted.add(created.body.id);
              break;
            }
          }
        }
        await call('GET', '/api/v1/posts?limit=10');
      }
    };
    const faults = (async () => {
      await sleep((SECONDS * 1000) / 3);
      process.stdout.write('restarting Postgres\n');
      postgres.stop();
      await sleep(3000);
      postgres.start();
      await sleep((SECONDS * 1000) / 3 - 3000);
      process.stdout.write('killing a worker (SIGKILL) and starting another\n');
      children[0]?.kill('SIGKILL');
      children.push(startWorker(env));
    })();
    const started = Date.now();
    await Promise.all([faults, ...Array.from({ length: CLIENTS }, (_, n) => client(n))]);
    const loadSeconds = (Date.now() - started) / 1000;

    // Every scheduled post comes due within 20 s of the load's end; wait for them all to settle.
    const db = new pg.Client({ connectionString: postgres.url() });
    await db.connect();
    let pending = -1;
    for (const until = Date.now() + SETTLE_TIMEOUT_MS; pending !== 0 && Date.now() < until; await sleep(1000)) {
      pending = Number((await db.query<{ n: string }>(`select count(*) as n from posts where status not in ('draft', 'published')`)).rows[0]?.n);
    }
    const posts = (await db.query<{ id: string; status: string }>('select id, status from posts')).rows;
    const targets = (
      await db.query<{ post_id: string; state: string; sent: string }>(`
        select t.post_id, t.state, count(o.platform_post_id) as sent
        from post_targets t
        left join target_parts p on p.post_id = t.post_id and p.account_id = t.account_id
        left join sandbox_outbox o on o.platform_post_id = p.material_key
        group by t.post_id, t.account_id, t.state`)
    ).rows;
    const outbox = Number((await db.query<{ n: string }>('select count(*) as n from sandbox_outbox')).rows[0]?.n);
    await db.end();

    const expected = new Set([...acknowledged].filter((id) => !deleted.has(id)));
    const present = new Set(posts.map((p) => p.id));
    const scheduled = posts.filter((p) => p.status !== 'draft');
    const checks: [string, boolean, string][] = [
      ['no 5xx other than 503 while Postgres was down', tally.fiveHundreds.length === 0, `${tally.fiveHundreds.length}`],
      ['every request answered within 15 s', tally.slowestMs < REQUEST_TIMEOUT_MS, `slowest ${tally.slowestMs} ms`],
      ['every 201 not deleted is a post', [...expected].every((id) => present.has(id)), `${expected.size} expected, ${present.size} present`],
      ['nothing else exists', [...present].every((id) => expected.has(id)), `${[...present].filter((id) => !expected.has(id)).length} unexpected`],
      ['every post has its 3 targets', targets.length === posts.length * accounts.length, `${targets.length} targets for ${posts.length} posts`],
      ['every due post published', pending === 0 && scheduled.every((p) => p.status === 'published'), `${pending} not settled`],
      [
        'every target of a published post sent exactly once',
        targets.filter((t) => scheduled.some((p) => p.id === t.post_id)).every((t) => t.state === 'published' && t.sent === '1'),
        `${outbox} outbox rows`,
      ],
    ];
    process.stdout.write(`\nload: ${loadSeconds.toFixed(0)} s, ${CLIENTS} clients, ${tally.sent} requests\n`);
    process.stdout.write(
      `answers: ${[...tally.byStatus]
        .sort()
        .map(([s, n]) => `${s}: ${n}`)
        .join(', ')}\n`,
    );
    for (const line of tally.fiveHundreds.slice(0, 10)) process.stdout.write(`  5xx: ${line}\n`);
    process.stdout.write(`posts acknowledged ${acknowledged.size}, deleted ${deleted.size}, published ${scheduled.length}, outbox rows ${outbox}\n\n`);
    for (const [name, ok, detail] of checks) process.stdout.write(`${ok ? 'PASS' : 'FAIL'}  ${name} (${detail})\n`);
    process.exitCode = checks.every(([, ok]) => ok) ? 0 : 1;
  } finally {
    cleanup();
  }
}

await main();
