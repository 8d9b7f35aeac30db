import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './spec-document.js';

export interface RunResult {
  /** The exit code; null when the process was killed. */
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** A tool from the repo's node_modules/.bin (tsc, redocly, openapi-ts…). */
export function repoBin(name: string): string {
  return join(REPO_ROOT, 'node_modules', '.bin', name);
}

/**
 * Runs a command to completion, killed with SIGKILL after `timeoutMs`. Never throws for a
 * non-zero exit: the caller reads `code` and the output.
 */
export function runBounded(
  command: string,
  args: string[],
  { cwd = REPO_ROOT, timeoutMs, env }: { cwd?: string; timeoutMs: number; env?: NodeJS.ProcessEnv },
): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      {
        cwd,
        timeout: timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: 32 * 1024 * 1024,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1', ...env },
      },
      (err, stdout, stderr) => {
        const e = err as (NodeJS.ErrnoException & { killed?: boolean; code?: number | string }) | null;
        const timedOut = e?.killed === true;
        const code = e === null ? 0 : typeof e.code === 'number' ? e.code : null;
        const why = e !== null && typeof e.code === 'string' ? `\n${command}: ${e.message}` : '';
        resolve({ code, stdout: String(stdout), stderr: String(stderr) + why, timedOut });
      },
    );
  });
}
