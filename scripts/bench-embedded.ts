/**
 * `npm run bench:embedded`: the default way to run Herald (`npm start`: the embedded PostgreSQL,
 * migrations and demo data on first start), as a user meets it:
 *  - time from starting `herald serve` to the first answered request (GET /health/ready → 200),
 *    cold (a new data folder: the cluster created) and warm (the same folder again, PostgreSQL
 *    stopped in between as Ctrl-C leaves it; median of WARM_RUNS);
 *  - memory of Herald and its PostgreSQL (the postmaster and every child of it) idle: 5 s after
 *    start, and settled (30 s after start, once V8's memory reducer has given back what starting
 *    used and idle connections have closed); and under load (listPosts at 10 connections for
 *    LOAD_SECONDS with the demo key, its rate limit raised above the load), peak and after. See
 *    memory() for how processes that share memory are added up;
 *  - a CLI command on the folder (`herald user create`, median of CLI_RUNS), time and its own peak
 *    memory, beside a running server (it connects to its PostgreSQL) and with none (it starts
 *    PostgreSQL and stops it).
 * The table goes to bench/results/embedded.md.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedServer } from '../src/db/embedded-server.js';
import { HERALD_COMMAND, buildHerald } from './build.js';
import { median, runLoad } from './bench/load.js';
import { proportionalMb, residentMb, serverProcesses } from './bench/processes.js';
import { REPO_ROOT } from './spec-document.js';

const WARM_RUNS = 3;
const CLI_RUNS = 5;
const LOAD_SECONDS = 10;
const IDLE_WAIT_MS = 5000;
const SETTLED_WAIT_MS = 25_000;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Started {
  pid: number;
  url: string;
  firstAnswerMs: number;
  output(): string;
  stop(): Promise<void>;
}

/** Starts `herald serve` as `npm start` does and polls readiness until it answers 200. */
async function start(dataDir: string): Promise<Started> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const begin = performance.now();
  const child = spawn(process.execPath, [...HERALD_COMMAND, 'serve'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      HERALD_DATA_DIR: dataDir,
      HERALD_MIGRATE_ON_START: 'true',
      HERALD_DEMO_ON_FIRST_START: 'true',
      LOG_LEVEL: 'warn',
      HERALD_RATE_LIMIT_PER_MINUTE: '100000000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let printed = '';
  for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk: Buffer) => (printed = (printed + chunk.toString()).slice(-65_536)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (const until = begin + 120_000; ;) {
    if (performance.now() > until || child.exitCode !== null) throw new Error(`herald serve did not answer in time:\n${printed}`);
    const ready = await fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(1000) }).then(
      (r) => r.status,
      () => 0,
    );
    if (ready === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return {
    pid: child.pid ?? 0,
    url,
    firstAnswerMs: performance.now() - begin,
    output: () => printed,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

interface Memory {
  /** Herald's resident memory and its PostgreSQL's proportional set sizes, summed: the measure with a target. */
  total: number;
  herald: number;
  postgres: number;
  /** Every process's resident memory summed, which counts PostgreSQL's shared memory once per process. */
  rss: number;
  processes: number;
}

/**
 * Memory of Herald (`pid`, its resident size: the node binary's pages count in full, though other
 * node processes on the machine share them) and of the PostgreSQL running in the data folder (the
 * proportional sizes of its processes, which share its shared buffers and code), in MB.
 */
function memory(pid: number, dataDir: string): Memory {
  const postmaster = Number(readFileSync(join(dataDir, 'pgdata', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const server = serverProcesses(postmaster);
  const sum = (pids: number[], read: (pid: number) => number) =>
    pids.reduce((total, p) => {
      try {
        return total + read(p);
      } catch {
        return total; // a backend that ended between listing and reading
      }
    }, 0);
  const herald = residentMb(pid).now;
  const postgres = sum(server, proportionalMb);
  return { total: herald + postgres, herald, postgres, rss: herald + sum(server, (p) => residentMb(p).now), processes: server.length };
}

/** Runs one CLI command on the folder; its time and the most memory it was seen holding (sampled every few ms). */
async function cliCommand(dataDir: string): Promise<{ ms: number; peakMb: number }> {
  const begin = performance.now();
  const child = spawn(process.execPath, [...HERALD_COMMAND, 'user', 'create'], {
    env: { PATH: process.env.PATH ?? '', HERALD_DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let printed = '';
  for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  let peakMb = 0;
  const sampler = setInterval(() => {
    readFile(`/proc/${child.pid}/status`, 'utf8').then(
      (status) => (peakMb = Math.max(peakMb, Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024)),
      () => {},
    );
  }, 5);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(sampler);
  if (code !== 0) throw new Error(`herald user create failed:\n${printed}`);
  return { ms: performance.now() - begin, peakMb };
}

async function main(): Promise<void> {
  await buildHerald();
  const dataDir = await mkdtemp(join(tmpdir(), 'herald-bench-embedded-'));
  // Under root, PostgreSQL runs as the user postgres, who must be able to enter the folder.
  await chmod(dataDir, 0o711);
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  try {
    const cold = await start(dataDir);
    const key = /Demo API key \(shown once, keep it\): (\S+)/.exec(cold.output())?.[1];
    await pause(IDLE_WAIT_MS);
    const idle = memory(cold.pid, dataDir);
    await pause(SETTLED_WAIT_MS);
    const settled = memory(cold.pid, dataDir);
    if (key === undefined) throw new Error('no demo key printed on the first start');
    let peak = settled;
    const sampler = setInterval(() => {
      const now = memory(cold.pid, dataDir);
      if (now.total > peak.total) peak = now;
    }, 250);
    const load = await runLoad(cold.url, key, { method: 'GET', paths: ['/api/v1/posts?limit=25'] }, 10, { seconds: LOAD_SECONDS });
    clearInterval(sampler);
    const afterLoad = memory(cold.pid, dataDir);
    await cold.stop();

    const warm: number[] = [];
    const warmIdle: Memory[] = [];
    const warmSettled: Memory[] = [];
    for (let i = 0; i < WARM_RUNS; i++) {
      const again = await start(dataDir);
      warm.push(again.firstAnswerMs);
      await pause(IDLE_WAIT_MS);
      warmIdle.push(memory(again.pid, dataDir));
      await pause(SETTLED_WAIT_MS);
      warmSettled.push(memory(again.pid, dataDir));
      await again.stop();
    }
    const serving = await start(dataDir);
    const beside: { ms: number; peakMb: number }[] = [];
    for (let i = 0; i < CLI_RUNS; i++) beside.push(await cliCommand(dataDir));
    await serving.stop();
    const alone: { ms: number; peakMb: number }[] = [];
    for (let i = 0; i < CLI_RUNS; i++) alone.push(await cliCommand(dataDir));

    const f = (n: number) => n.toFixed(0);
    const mid = (runs: Memory[]): Memory => runs.slice().sort((a, b) => a.total - b.total)[Math.floor(runs.length / 2)] ?? runs[0]!;
    const both = (m: Memory) =>
      `${f(m.total)} MB (Herald ${f(m.herald)} + PostgreSQL ${f(m.postgres)} in ${m.processes} processes; ${f(m.rss)} MB resident summed)`;
    const cli = (runs: { ms: number; peakMb: number }[]) => `${f(median(runs.map((r) => r.ms)))} ms, ${f(median(runs.map((r) => r.peakMb)))} MB peak`;
    const cliMet = (runs: { ms: number }[]) => `< 300 ms ${median(runs.map((r) => r.ms)) < 300 ? '✓' : '✗'}`;
    const lines = [
      '| embedded PostgreSQL (npm start) | measured | target |',
      '|---|---|---|',
      `| first answered request, cold (new data folder: cluster created, migrated, demo seeded) | ${f(cold.firstAnswerMs)} ms | |`,
      `| first answered request, warm (median of ${WARM_RUNS}) | ${f(median(warm))} ms | < 1,000 ms ${median(warm) < 1000 ? '✓' : '✗'} |`,
      `| Herald + PostgreSQL 5 s after start, first start / warm (median) | ${both(idle)} / ${both(mid(warmIdle))} | |`,
      `| Herald + PostgreSQL idle (30 s after start), first start / warm (median) | ${both(settled)} / ${both(mid(warmSettled))} | < 150 MB ${mid(warmSettled).total < 150 ? '✓' : '✗'} |`,
      `| Herald + PostgreSQL under load (listPosts, 10 connections, ${LOAD_SECONDS} s: ${f(load.requestsPerSecond)} req/s), peak / after | ${both(peak)} / ${both(afterLoad)} | |`,
      `| CLI command (\`herald user create\`, median of ${CLI_RUNS}) beside the running server: connects to its PostgreSQL | ${cli(beside)} | ${cliMet(beside)} |`,
      `| CLI command with no server: starts PostgreSQL, and stops it when done | ${cli(alone)} | ${cliMet(alone)} |`,
    ];
    const table = lines.join('\n');
    console.log(table);
    await mkdir(join(REPO_ROOT, 'bench/results'), { recursive: true });
    await writeFile(join(REPO_ROOT, 'bench/results/embedded.md'), `# npm run bench:embedded, ${new Date().toISOString().slice(0, 10)}\n\n${table}\n`);
  } finally {
    // A run that failed midway may have left its server running.
    await new EmbeddedServer(dataDir).stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
