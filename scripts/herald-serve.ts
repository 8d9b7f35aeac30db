import { spawn } from 'node:child_process';

export interface ServeProcess {
  pid: number;
  /** Where it listens, as its ready line says. */
  url: string;
  /** SIGTERM, then waits for it to exit; its exit code. */
  stop(): Promise<number | null>;
  /** What it printed last (its last megabyte), stdout and stderr. */
  output(): string;
}

const OUTPUT_KEPT = 1 << 20;

/** Another machine to run it on (a network namespace, test/support/netns.ts), where it listens on `port`. */
export interface ServeElsewhere {
  port: number;
  /** The program and arguments that run `file args` there. */
  command(file: string, args: readonly string[]): [string, string[]];
  /** Where this machine reaches that port. */
  urlOf(port: number): string;
}

/**
 * Starts `herald serve` (`node ...nodeArgs serve`) on 127.0.0.1, on a port the system picks (or on
 * another machine), and waits at most 60 s for its ready line. Shared by the tests and the start-up
 * benchmark.
 */
export async function startHeraldServe(nodeArgs: string[], env: Record<string, string>, elsewhere?: ServeElsewhere): Promise<ServeProcess> {
  const [file, args] = elsewhere?.command(process.execPath, [...nodeArgs, 'serve']) ?? [process.execPath, [...nodeArgs, 'serve']];
  const child = spawn(file, args, { env: { ...env, HOST: '127.0.0.1', PORT: String(elsewhere?.port ?? 0) }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  // Only the last of it is kept: a server logging every request under load would fill memory. Kept as
  // chunks, not one string: copying a megabyte per chunk cost the benchmark's load generator, which
  // reads it, a good part of its core.
  const chunks: string[] = [];
  let kept = 0;
  const keep = (chunk: Buffer) => {
    chunks.push(chunk.toString());
    kept += chunks.at(-1)?.length ?? 0;
    while (chunks.length > 1 && kept - (chunks[0]?.length ?? 0) >= OUTPUT_KEPT) kept -= chunks.shift()?.length ?? 0;
  };
  for (const stream of [child.stdout, child.stderr]) stream.on('data', keep);
  const printed = () => chunks.join('');
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    return exited;
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('herald serve did not become ready in 60 s')), 60_000);
      const lookForReady = () => {
        const ready = /Herald is ready at (\S+)\s/.exec(printed());
        if (ready?.[1] !== undefined) {
          clearTimeout(timer);
          child.stdout.off('data', lookForReady);
          resolve(elsewhere === undefined ? ready[1] : elsewhere.urlOf(elsewhere.port));
        }
      };
      child.stdout.on('data', lookForReady);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`herald serve exited with ${code}`));
      });
    });
    return { pid: child.pid ?? 0, url, stop, output: printed };
  } catch (err) {
    await stop();
    throw err;
  }
}
