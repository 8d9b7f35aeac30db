/**
 * `npm run bench:embedded`: the default way to run Herald (`npm start`: embedded database,
 * migrations and demo data on first start), as a user meets it:
 *  - time from starting `herald serve` to the first answered request (GET /health/ready → 200),
 *    cold (a new data folder) and warm (the same folder again; median of WARM_RUNS);
 *  - resident memory idle: 5 s after start, and settled (30 s after start, once V8's memory reducer
 *    has given back what starting used, about 16 s in); and under load (listPosts at 10 connections for
 *    LOAD_SECONDS with the demo key, its rate limit raised above the load), peak and after;
 *  - a CLI command on the folder (`herald user create`), time and peak memory, while the server
 *    runs (its statements go through the server) and with no server (it opens the database itself).
 * The table goes to bench/results/embedded.md.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HERALD_COMMAND, buildHerald } from './build.js';
import { median, runLoad } from './bench/load.js';
import { residentMb } from './bench/processes.js';
import { REPO_ROOT } from './spec-document.js';

const WARM_RUNS = 3;
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
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), HERALD_DATA_DIR: dataDir, HERALD_MIGRATE_ON_START: 'true', HERALD_DEMO_ON_FIRST_START: 'true', LOG_LEVEL: 'warn', HERALD_RATE_LIMIT_PER_MINUTE: '100000000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let printed = '';
  for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk: Buffer) => (printed = (printed + chunk.toString()).slice(-65_536)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (const until = begin + 120_000; ; ) {
    if (performance.now() > until || child.exitCode !== null) throw new Error(`herald serve did not answer in time:\n${printed}`);
    const ready = await fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(1000) }).then((r) => r.status, () => 0);
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

/** Runs one CLI command on the folder; its time and the most memory it was seen holding (sampled every few ms). */
async function cliCommand(dataDir: string): Promise<{ ms: number; peakMb: number }> {
  const begin = performance.now();
  const child = spawn(process.execPath, [...HERALD_COMMAND, 'user', 'create'], { env: { PATH: process.env.PATH ?? '', HERALD_DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
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
  try {
    const cold = await start(dataDir);
    const key = /Demo API key \(shown once, keep it\): (\S+)/.exec(cold.output())?.[1];
    await new Promise((resolve) => setTimeout(resolve, IDLE_WAIT_MS));
    const idle = residentMb(cold.pid).now;
    await new Promise((resolve) => setTimeout(resolve, SETTLED_WAIT_MS));
    const settled = residentMb(cold.pid).now;
    if (key === undefined) throw new Error('no demo key printed on the first start');
    const load = await runLoad(cold.url, key, { method: 'GET', paths: ['/api/v1/posts?limit=25'] }, 10, { seconds: LOAD_SECONDS });
    const underLoad = residentMb(cold.pid);
    await cold.stop();

    const warm: number[] = [];
    const warmIdle: number[] = [];
    const warmSettled: number[] = [];
    for (let i = 0; i < WARM_RUNS; i++) {
      const again = await start(dataDir);
      warm.push(again.firstAnswerMs);
      await new Promise((resolve) => setTimeout(resolve, IDLE_WAIT_MS));
      warmIdle.push(residentMb(again.pid).now);
      await new Promise((resolve) => setTimeout(resolve, SETTLED_WAIT_MS));
      warmSettled.push(residentMb(again.pid).now);
      await again.stop();
    }
    const serving = await start(dataDir);
    const throughServer = await cliCommand(dataDir);
    await serving.stop();
    const alone = await cliCommand(dataDir);
    const f = (n: number) => n.toFixed(0);
    const lines = [
      '| embedded database (npm start) | measured | target |',
      '|---|---|---|',
      `| first answered request, cold (new data folder: database created, migrated, demo seeded) | ${f(cold.firstAnswerMs)} ms | |`,
      `| first answered request, warm (median of ${WARM_RUNS}) | ${f(median(warm))} ms | < 1,500 ms ${median(warm) < 1500 ? '✓' : '✗'} |`,
      `| resident memory 5 s after start, first start / warm (median) | ${f(idle)} MB / ${f(median(warmIdle))} MB | |`,
      `| resident memory idle (30 s after start), first start / warm (median) | ${f(settled)} MB / ${f(median(warmSettled))} MB | < 250 MB ${median(warmSettled) < 250 ? '✓' : '✗'} |`,
      `| resident memory under load (listPosts, 10 connections, ${LOAD_SECONDS} s: ${f(load.requestsPerSecond)} req/s), peak / after | ${f(underLoad.peak)} MB / ${f(underLoad.now)} MB | |`,
      `| CLI command (\`herald user create\`) while the server runs: through the server | ${f(throughServer.ms)} ms, ${f(throughServer.peakMb)} MB peak | |`,
      `| CLI command with no server: opens the database itself | ${f(alone.ms)} ms, ${f(alone.peakMb)} MB peak | |`,
    ];
    const table = lines.join('\n');
    console.log(table);
    await mkdir(join(REPO_ROOT, 'bench/results'), { recursive: true });
    await writeFile(join(REPO_ROOT, 'bench/results/embedded.md'), `# npm run bench:embedded, ${new Date().toISOString().slice(0, 10)}\n\n${table}\n`);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
