/**
 * The processes a benchmark runs and watches: pinning to cores with taskset (where it works),
 * resident memory from /proc, and the baseline server.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../spec-document.js';

/** Pins a process and all its threads to these cores; false where taskset is missing or refused. */
export function pin(pid: number, cores: string): boolean {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', cores, String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The cores a process may run on now, as taskset prints them (to put them back afterwards). */
export function affinity(pid: number): string | undefined {
  try {
    return /: (\S+)\s*$/.exec(execFileSync('taskset', ['-p', '-c', String(pid)], { encoding: 'utf8' }))?.[1];
  } catch {
    return undefined;
  }
}

/** Resident set size now and at its peak, in MB, from /proc/PID/status. */
export function residentMb(pid: number): { now: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { now: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

/**
 * Proportional set size in MB, from /proc/PID/smaps_rollup: resident memory with each shared page
 * divided among the processes that map it, so the sizes of several processes add up without
 * counting shared memory (PostgreSQL's shared buffers, a binary's code) once per process.
 */
export function proportionalMb(pid: number): number {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  return Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? Number.NaN) / 1024;
}

/** CPU time a process has used so far (user + system), in seconds, from /proc/PID/stat. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  // utime and stime are the 14th and 15th fields of the line, in clock ticks (100 a second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU time the whole machine has spent busy (every core, every process), in seconds, from /proc/stat. */
export function machineBusySeconds(): number {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/).map(Number) ?? [];
  // user nice system idle iowait irq softirq steal: all but idle and iowait are busy.
  return ticks.slice(0, 8).reduce((sum, t, i) => (i === 3 || i === 4 ? sum : sum + t), 0) / 100;
}

/** The process ids of the Postgres server behind a backend: its postmaster and every child of it. */
export function postgresProcesses(backendPid: number): number[] {
  try {
    return serverProcesses(Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${backendPid}/status`, 'utf8'))?.[1]));
  } catch {
    return [];
  }
}

/** A Postgres server's processes: its postmaster and every child of it. */
export function serverProcesses(postmaster: number): number[] {
  try {
    const children = execFileSync('pgrep', ['-P', String(postmaster)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
    return [postmaster, ...children];
  } catch {
    return [postmaster];
  }
}

export interface Child {
  pid: number;
  url: string;
  stop(): Promise<void>;
}

/** Starts the baseline server on a port the system picks and waits for its line. */
export async function startBaseline(databaseUrl: string): Promise<Child> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'scripts/bench/baseline-server.ts')], {
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the baseline did not start in 30 s')), 30_000);
    let printed = '';
    child.stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
      const match = /listening at (\S+)/.exec(printed);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`the baseline exited with ${code}`)));
  });
  return {
    pid: child.pid ?? 0,
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
