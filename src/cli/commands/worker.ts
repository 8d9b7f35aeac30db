import { Command, InvalidArgumentError } from 'commander';
import { readEnvironment } from '../wiring/configuration.js';
import { fail } from '../run-command.js';

/** `herald worker`: publishes due posts beside any number of API processes and other workers on one database. */
export function workerCommand(): Command {
  return new Command('worker')
    .description('publish scheduled posts as they come due (DATABASE_URL, HERALD_DATA_DIR, HERALD_SECRET_KEY)')
    .option('--once', 'publish everything due now, wait for what other workers hold, then exit')
    .option('--concurrency <n>', 'posts published at a time (default HERALD_WORKER_CONCURRENCY or 4)', positive)
    .action(async (opts: { once?: boolean; concurrency?: number }) => {
      try {
        const env = readEnvironment();
        // Loaded here, not at start: the platform clients would slow every other command.
        const { runWorkerProcess } = await import('../wiring/worker-process.js');
        await runWorkerProcess(env, { once: opts.once === true, concurrency: opts.concurrency ?? env.workerConcurrency });
      } catch (err) {
        fail(err);
      }
    });
}

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive integer');
  return n;
}
