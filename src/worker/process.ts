import { join } from 'node:path';
import closeWithGrace from 'close-with-grace';
import { pino } from 'pino';
import type { Environment } from '../config/environment.js';
import { LOG_REDACTION } from '../config/log-redaction.js';
import { pendingMigrations } from '../data/migrate.js';
import { openDatabase } from '../data/open-database.js';
import { LocalDiskStorage } from '../storage/local-disk-storage.js';
import { startPublishingRuntime } from './runtime.js';
import { drain, drainDeliveries, startWorker } from './worker.js';

/**
 * A worker process: with `once`, drains what is due and exits (printing one JSON line, like every
 * command); otherwise runs until SIGINT/SIGTERM, then finishes the posts in hand.
 */
export async function runWorkerProcess(env: Environment, options: { once: boolean; concurrency: number }): Promise<void> {
  const log = pino({ level: env.logLevel, redact: LOG_REDACTION }, pino.destination(2));
  const handle = await openDatabase(env, { onBackgroundError: (err) => log.warn({ errorName: err.name }, 'database connection lost; will reconnect') });
  try {
    const pending = await pendingMigrations(handle.db);
    if (pending.length > 0) throw new Error(`The database has ${pending.length} pending migration(s); run "herald db migrate" first`);
    const runtime = await startPublishingRuntime(env, handle.db, log, {
      supervise: !options.once,
      storage: new LocalDiskStorage(join(env.dataDir, 'media')),
    });
    if (options.once) {
      try {
        const posts = await drain(runtime.deps, options.concurrency);
        const deliveries = await drainDeliveries(runtime.deps, options.concurrency);
        process.stdout.write(`${JSON.stringify({ posts, deliveries })}\n`);
      } finally {
        await runtime.stop();
      }
      return;
    }
    const worker = await startWorker(runtime.deps, runtime.queue, options.concurrency);
    log.info({ concurrency: options.concurrency }, 'worker started');
    await new Promise<void>((resolve) => {
      closeWithGrace({ delay: 30_000 }, async ({ signal, err }) => {
        if (err) log.error({ errorName: err.name }, 'stopping after an unexpected error');
        else log.info({ signal }, 'stopping');
        await worker.stop();
        await runtime.stop();
        resolve();
      });
    });
  } finally {
    await handle.close();
  }
}
