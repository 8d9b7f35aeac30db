import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { HERALD_COMMAND } from '../../scripts/build.js';
import { startHeraldServe, type ServeElsewhere, type ServeProcess } from '../../scripts/herald-serve.js';
import type { Machine } from './netns.js';
import type { Schemas } from './api.js';

// The compiled binary users run (package.json's bin); test/support/global-setup.ts builds it first.

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function cliEnv(env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env };
}

/** Runs the real `herald` binary in a child process, as an operator's script would. */
export function herald(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...HERALD_COMMAND, ...args], { env: cliEnv(env), timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Starts the real `herald` binary and returns at once: for a process a test stops (or kills) midway; on `machine`, inside it. */
export function heraldSpawn(
  args: string[],
  env: Record<string, string>,
  output: 'ignore' | 'pipe' = 'ignore',
  machine?: Pick<Machine, 'command'>,
): ChildProcess {
  const [file, argv] = machine?.command(process.execPath, [...HERALD_COMMAND, ...args]) ?? [process.execPath, [...HERALD_COMMAND, ...args]];
  return spawn(file, argv, { env: cliEnv(env), stdio: ['ignore', output, output] });
}

/** The one JSON object a successful command prints. */
export function json<T = Record<string, unknown>>(result: CliResult): T {
  if (result.code !== 0) throw new Error(`herald failed (${result.code}): ${result.stderr}`);
  const lines = result.stdout.trim().split('\n');
  if (lines.length !== 1) throw new Error(`expected one line of JSON, got: ${result.stdout}`);
  return JSON.parse(lines[0] ?? '') as T;
}

/** `herald account connect` of a Bluesky account on `service` for `user`, as an operator connects one: the account. */
export async function heraldConnectBluesky(
  env: Record<string, string>,
  service: string,
  login: { handle: string; appPassword: string },
  user: string,
): Promise<Schemas['Account']> {
  const args = ['account', 'connect', '--platform', 'bluesky', '--service', service, '--identifier', login.handle, '--app-password', login.appPassword];
  return json<Schemas['Account']>(await herald([...args, '--user', user], env));
}

/** `herald serve`, on 127.0.0.1 and a port the system picks (or on `elsewhere`), once it has printed its ready line. */
export function heraldServe(env: Record<string, string>, elsewhere?: ServeElsewhere): Promise<ServeProcess> {
  return startHeraldServe(HERALD_COMMAND, cliEnv(env), elsewhere);
}

export type { ServeProcess };
