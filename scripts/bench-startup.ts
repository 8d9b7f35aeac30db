/**
 * Benchmark: start-up of the `herald` binary as users run it (compiled, dist/) against the TypeScript
 * sources through tsx (how it ran before the build), in one run, on Postgres:
 *  - `herald user create`: wall time and peak RSS, with bare `node -e 0` for reference;
 *  - `herald serve`: time until it prints its ready line, and until GET /openapi.json answers.
 * Targets (issue 8): a CLI command under 400 ms and 90 MB; `herald serve` ready under 1 s. The same
 * CLI call on the embedded PostgreSQL is reported apart, without a target: with no server running, it
 * starts PostgreSQL and stops it.
 *
 *   npm run bench:startup                    # median of 9 runs (serve: 5)
 *   BENCH_RUNS=15 BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:startup
 *
 * BENCH_DATABASE_URL names a Postgres server (default the local one on 127.0.0.1) on which a scratch
 * database is created, migrated and dropped. Peak RSS and CPU time come from scripts/bench-usage.mjs,
 * preloaded into every measured process. The variants take turns, so a change in the machine's load
 * touches them alike; wall times still grow with the load (printed with the results), CPU times much
 * less, so both are shown.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { buildHerald, HERALD_COMMAND } from './build.js';
import { startHeraldServe } from './herald-serve.js';
import { REPO_ROOT } from './spec-document.js';

const RUNS = positiveInteger(process.env.BENCH_RUNS, 9);
const SERVE_RUNS = Math.ceil(RUNS / 2);
const ADMIN_URL = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const CHILD_TIMEOUT_MS = 60_000;
const PRELOAD = join(REPO_ROOT, 'scripts/bench-usage.mjs');

const CLI_TARGET_MS = 400;
const CLI_TARGET_MB = 90;
const SERVE_TARGET_MS = 1000;

/** Node arguments that run `herald`: the compiled binary, or the sources through tsx. */
const COMPILED = HERALD_COMMAND;
const TSX = ['--import', 'tsx', join(REPO_ROOT, 'src/cli/main.ts')];

/** What the preload recorded for one process. */
interface Usage {
  /** Peak resident set size in MB (10^6 bytes). */
  mb: number;
  /** CPU time used over the process's life, user + system. */
  cpuMs: number;
}

interface Run extends Usage {
  ms: number;
  stdout: string;
}

interface ServeRun extends Usage {
  readyMs: number;
  answerMs: number;
}

function positiveInteger(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`BENCH_RUNS must be a positive integer, got ${value}`);
  return n;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

function childEnv(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...extra };
}

let usageFiles = 0;
function usageFile(scratch: string): string {
  usageFiles += 1;
  return join(scratch, `usage-${usageFiles}.json`);
}

async function readUsage(file: string): Promise<Usage> {
  const usage = JSON.parse(await readFile(file, 'utf8')) as { maxRssKiB: number; cpuMicros: number };
  await rm(file, { force: true });
  return { mb: (usage.maxRssKiB * 1024) / 1e6, cpuMs: usage.cpuMicros / 1000 };
}

/** Runs one command to its end; fails unless it exits 0. */
async function runToEnd(nodeArgs: string[], env: Record<string, string>, scratch: string): Promise<Run> {
  const file = usageFile(scratch);
  const start = performance.now();
  const child = spawn(process.execPath, ['--import', PRELOAD, ...nodeArgs], {
    cwd: REPO_ROOT,
    env: childEnv({ ...env, HERALD_BENCH_USAGE_FILE: file }),
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: CHILD_TIMEOUT_MS,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  const ms = performance.now() - start;
  if (code !== 0) throw new Error(`node ${nodeArgs.join(' ')} exited with ${code}: ${stderr.trim()}`);
  return { ms, stdout, ...(await readUsage(file)) };
}

/** Starts `herald serve`, waits for its ready line, fetches /openapi.json, stops it. */
async function serveOnce(herald: string[], env: Record<string, string>, scratch: string): Promise<ServeRun> {
  const file = usageFile(scratch);
  const start = performance.now();
  const service = await startHeraldServe(['--import', PRELOAD, ...herald], childEnv({ ...env, HERALD_BENCH_USAGE_FILE: file }));
  try {
    const readyMs = performance.now() - start;
    const res = await fetch(`${service.url}/openapi.json`, { signal: AbortSignal.timeout(10_000) });
    await res.arrayBuffer();
    const answerMs = performance.now() - start;
    if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}`);
    const code = await service.stop();
    if (code !== 0) throw new Error(`herald serve exited with ${code}`);
    return { readyMs, answerMs, ...(await readUsage(file)) };
  } finally {
    await service.stop();
  }
}

interface Row {
  label: string;
  ms: number;
  usage?: Usage;
  /** The same measurement's median through tsx, for the ratio. */
  tsxMs?: number;
  target?: string;
}

function table(title: string, rows: Row[]): string {
  const head = `  ${'measurement'.padEnd(50)}${'wall ms'.padStart(9)}${'cpu ms'.padStart(9)}${'peak MB'.padStart(9)}${'vs tsx'.padStart(8)}   target`;
  const lines = rows.map((r) => {
    const ratio = r.tsxMs === undefined ? '' : `${(r.ms / r.tsxMs).toFixed(2)}x`;
    const cpu = r.usage === undefined ? '' : r.usage.cpuMs.toFixed(0);
    const mb = r.usage === undefined ? '' : r.usage.mb.toFixed(0);
    return `  ${r.label.padEnd(50)}${r.ms.toFixed(0).padStart(9)}${cpu.padStart(9)}${mb.padStart(9)}${ratio.padStart(8)}   ${r.target ?? ''}`.trimEnd();
  });
  return [title, head, ...lines].join('\n');
}

function verdict(met: boolean, what: string): string {
  return `${what}: ${met ? 'met' : 'NOT met'}`;
}

async function main(): Promise<void> {
  await buildHerald();
  const scratch = await mkdtemp(join(tmpdir(), 'herald-bench-startup-'));
  const name = `herald_bench_startup_${randomBytes(4).toString('hex')}`;
  const databaseUrl = new URL(ADMIN_URL);
  databaseUrl.pathname = `/${name}`;
  const onPostgres = { DATABASE_URL: databaseUrl.toString() };
  // Under root, PostgreSQL runs as the user postgres, who must be able to enter the folder.
  await chmod(scratch, 0o711);
  const embedded = { HERALD_DATA_DIR: join(scratch, 'data') };
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  try {
    await runToEnd([...COMPILED, 'db', 'migrate'], onPostgres, scratch);
    await runToEnd([...COMPILED, 'db', 'migrate'], embedded, scratch);

    const variants = {
      bare: { args: ['-e', '0'], env: {} },
      compiled: { args: [...COMPILED, 'user', 'create'], env: onPostgres },
      tsx: { args: [...TSX, 'user', 'create'], env: onPostgres },
      embeddedCompiled: { args: [...COMPILED, 'user', 'create'], env: embedded },
      embeddedTsx: { args: [...TSX, 'user', 'create'], env: embedded },
    };
    type Variant = keyof typeof variants;
    const cli: Record<Variant, Run[]> = { bare: [], compiled: [], tsx: [], embeddedCompiled: [], embeddedTsx: [] };
    for (let i = 0; i < RUNS; i++) {
      for (const key of Object.keys(variants) as Variant[]) {
        const run = await runToEnd(variants[key].args, variants[key].env, scratch);
        if (key !== 'bare' && !/^\{"id":"usr_[0-9a-z]+"\}\n$/.test(run.stdout)) throw new Error(`unexpected output of ${key}: ${run.stdout}`);
        cli[key].push(run);
      }
    }
    const serve: Record<'compiled' | 'tsx', ServeRun[]> = { compiled: [], tsx: [] };
    for (let i = 0; i < SERVE_RUNS; i++) {
      serve.compiled.push(await serveOnce(COMPILED, onPostgres, scratch));
      serve.tsx.push(await serveOnce(TSX, onPostgres, scratch));
    }

    const wall = (runs: { ms: number }[]) => median(runs.map((r) => r.ms));
    const usage = (runs: Usage[]): Usage => ({ mb: median(runs.map((r) => r.mb)), cpuMs: median(runs.map((r) => r.cpuMs)) });
    const ready = (runs: ServeRun[]) => median(runs.map((r) => r.readyMs));
    const answered = (runs: ServeRun[]) => median(runs.map((r) => r.answerMs));
    const cliMs = wall(cli.compiled);
    const cliMb = usage(cli.compiled).mb;
    const readyMs = ready(serve.compiled);

    const load = loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
    console.log(
      `Node ${process.version}, ${availableParallelism()} CPUs, load average ${load}; medians of ${RUNS} CLI runs and ${SERVE_RUNS} serve runs per variant`,
    );
    console.log('cpu ms: user + system CPU time over the whole process (for serve: start, one request, shutdown)\n');
    console.log(
      table('Postgres', [
        { label: 'node -e 0 (reference)', ms: wall(cli.bare), usage: usage(cli.bare) },
        {
          label: 'herald user create, compiled',
          ms: cliMs,
          usage: usage(cli.compiled),
          tsxMs: wall(cli.tsx),
          target: verdict(cliMs < CLI_TARGET_MS && cliMb < CLI_TARGET_MB, `< ${CLI_TARGET_MS} ms and < ${CLI_TARGET_MB} MB`),
        },
        { label: 'herald user create, tsx (before)', ms: wall(cli.tsx), usage: usage(cli.tsx) },
        {
          label: 'herald serve: ready line, compiled',
          ms: readyMs,
          tsxMs: ready(serve.tsx),
          target: verdict(readyMs < SERVE_TARGET_MS, `< ${SERVE_TARGET_MS} ms`),
        },
        { label: 'herald serve: ready line, tsx (before)', ms: ready(serve.tsx) },
        { label: 'herald serve: /openapi.json answered, compiled', ms: answered(serve.compiled), usage: usage(serve.compiled), tsxMs: answered(serve.tsx) },
        { label: 'herald serve: /openapi.json answered, tsx (before)', ms: answered(serve.tsx), usage: usage(serve.tsx) },
      ]),
    );
    console.log();
    console.log(
      table('Embedded PostgreSQL, started and stopped by the command, no target', [
        { label: 'herald user create, compiled', ms: wall(cli.embeddedCompiled), usage: usage(cli.embeddedCompiled), tsxMs: wall(cli.embeddedTsx) },
        { label: 'herald user create, tsx (before)', ms: wall(cli.embeddedTsx), usage: usage(cli.embeddedTsx) },
      ]),
    );
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
    await rm(scratch, { recursive: true, force: true });
  }
}

await main();
