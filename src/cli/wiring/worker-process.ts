import closeWithGrace from 'close-with-grace';
import { pino, type Logger } from 'pino';
import type { Environment } from './configuration.js';
import { LOG_REDACTION } from './log-redaction.js';
import { pendingMigrations } from '../../db/migrate.js';
import { openDatabase } from '../../db/open-database.js';
import { createDependencies } from './dependencies.js';
import { drain, drainDeliveries, startWorker } from '../../worker/worker.js';

/** How long a stopping worker may take to finish the posts in hand before the process exits anyway. */
const STOP_GRACE_MS = 30_000;

/**
 * A worker process: with `once`, drains what is due and exits (printing one JSON line, like every
 * command); otherwise runs until SIGINT/SIGTERM, then finishes the posts in hand.
 */
export async function runWorkerProcess(env: Environment, options: { once: boolean; concurrency: number }): Promise<void> {
  const log = pino({ level: env.logLevel, redact: LOG_REDACTION }, pino.destination(2));
  if (options.once) {
    await drainOnce(env, log, options.concurrency);
    return;
  }
  const running = startRunning(env, log, options.concurrency);
  // Signals are held from the first moment: one that comes while the worker starts stops it cleanly once started.
  closeWithGrace({ delay: STOP_GRACE_MS }, async ({ signal, err }) => {
    if (err) log.error({ errorName: err.name }, 'stopping after an unexpected error');
    else log.info({ signal }, 'stopping');
    const stop = await running.catch(() => undefined);
    await stop?.();
  });
  await running;
  log.info({ concurrency: options.concurrency }, 'worker started');
}

/** Starts the worker; resolves with the function that stops it and closes the database. */
async function startRunning(env: Environment, log: Logger, concurrency: number): Promise<() => Promise<void>> {
  const { handle, deps } = await openDependencies(env, log);
  try {
    const worker = await startWorker(deps, concurrency, handle);
    return async () => {
      await worker.stop();
      await handle.close();
    };
  } catch (err) {
    await handle.close().catch(() => {});
    throw err;
  }
}

async function drainOnce(env: Environment, log: Logger, concurrency: number): Promise<void> {
  const { handle, deps } = await openDependencies(env, log);
  try {
    const posts = await drain(deps, concurrency);
    const deliveries = await drainDeliveries(deps, concurrency);
    process.stdout.write(`${JSON.stringify({ posts, deliveries })}\n`);
  } finally {
    await handle.close();
  }
}

async function openDependencies(env: Environment, log: Logger) {
  const handle = await openDatabase(env, { onBackgroundError: (err) => log.warn({ errorName: err.name }, 'database connection lost; will reconnect') });
  try {
    const pending = await pendingMigrations(handle.db);
    if (pending.length > 0) throw new Error(`The database has ${pending.length} pending migration(s); run "herald db migrate" first`);
    const deps = await createDependencies(env, handle.db, log);
    return { handle, deps };
  } catch (err) {
    await handle.close().catch(() => {});
    throw err;
  }
}
