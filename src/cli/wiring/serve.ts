import closeWithGrace from 'close-with-grace';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { pino } from 'pino';
import type { Environment } from './configuration.js';
import { isDatabaseUnavailable } from '../../db/connection-errors.js';
import type { DatabaseHandle } from '../../db/database.js';
import { migrateToLatest } from '../../db/migrate.js';
import { openDatabase } from '../../db/open-database.js';
import { countUsers } from '../../db/queries/users.js';
import { watchApiKeys } from '../../domain/api-key-cache.js';
import { scheduleDemoPost, seedDemo, type DemoPost, type DemoSeed } from '../../domain/demo.js';
import { errorName } from '../../domain/errors.js';
import { removeAbandonedUploads } from '../../domain/media/abandoned-uploads.js';
import { createDependencies, mediaStorageOf } from './dependencies.js';
import { startWorker, type RunningWorker } from '../../worker/worker.js';
import { buildApp } from '../../api/app.js';
import { LOG_REDACTION } from './log-redaction.js';
import { ServiceState } from '../../api/service-state.js';

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  /** Settles when the database is open (and migrated, when asked); requests before that get 503. */
  ready: Promise<void>;
  close(): Promise<void>;
}

export interface ServerHooks {
  /** Told about the demo seeded on a first start, so the CLI can show its key once. */
  onDemoSeeded?: (seed: DemoSeed, post: DemoPost) => void;
}

/** How long a log line may wait in the buffer before it is written. */
const LOG_FLUSH_MS = 200;

/**
 * Standard output, written a buffer of lines at a time rather than one write per line (one per
 * request under load). A line waits at most LOG_FLUSH_MS; pino writes what is left when the process
 * exits. The flush timer runs only while lines come (sonic-boom's own periodicFlush writes every
 * interval, even nothing, waking an idle server five times a second): it stops after an interval
 * without a line, having flushed once more for lines that waited behind a write under way.
 */
function logDestination(): { write(line: string): void } {
  const out = pino.destination({ dest: 1, minLength: 4096 });
  let timer: NodeJS.Timeout | undefined;
  let written = false;
  const tick = () => {
    out.flush();
    if (written) {
      written = false;
      timer?.refresh();
    } else {
      timer = undefined;
    }
  };
  return {
    write(line) {
      out.write(line);
      written = true;
      if (timer === undefined) {
        timer = setTimeout(tick, LOG_FLUSH_MS);
        timer.unref();
      }
    },
  };
}

/** How long to wait between attempts to reach a database that is not up yet. */
const STARTUP_RETRY_MS = 2000;

/**
 * Listens before the database is ready: the port answers at once (503 until ready), and a
 * Postgres that is down at start is retried until it comes up. The first attempt to open it
 * starts with the HTTP stack, so an embedded database gets ready while the routes are built.
 */
export async function startServer(env: Environment, hooks: ServerHooks = {}): Promise<RunningServer> {
  const storage = await mediaStorageOf(env);
  const state = new ServiceState();
  let log: FastifyBaseLogger | undefined;
  const open = () =>
    openDatabase(env, {
      onBackgroundError: (err) => log?.warn({ errorName: err.name }, 'database connection lost; will reconnect'),
    });
  let firstAttempt: Promise<DatabaseHandle> | undefined = open();
  // Awaited in the loop below, or closed here if the server never gets that far.
  firstAttempt.catch(() => {});
  let app: FastifyInstance;
  try {
    app = await buildApp({
      context: state,
      logger: { level: env.logLevel, redact: LOG_REDACTION, stream: logDestination() },
      rateLimits: { limits: env.rateLimits, redisUrl: env.redisUrl },
      trustProxy: env.trustProxy,
    });
    log = app.log;
    await app.listen({ host: env.host, port: env.port });
  } catch (err) {
    await firstAttempt.then((h) => h.close()).catch(() => {});
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : env.port;
  const url = `http://${env.host}:${port}`;
  // Files that uploads cut short by a crash left in staging; the worker's housekeeping removes later ones.
  const staging = removeAbandonedUploads(storage, new Date()).then(
    (removed) => {
      if (removed > 0) app.log.info({ removed }, 'abandoned uploads removed from staging');
    },
    (err: unknown) => app.log.warn({ errorName: errorName(err) }, 'could not clean the upload staging folder'),
  );

  let handle: DatabaseHandle | undefined;
  let worker: RunningWorker | undefined;
  let keys: Awaited<ReturnType<typeof watchApiKeys>> | undefined;
  let closing = false;
  const ready = (async () => {
    await staging;
    while (!closing) {
      try {
        const attempt = firstAttempt ?? open();
        firstAttempt = undefined;
        handle = await attempt;
        if (env.migrateOnStart) {
          const applied = await migrateToLatest(handle.db);
          if (applied.length > 0) app.log.info({ migrations: applied }, 'migrations applied');
        }
        const deps = await createDependencies(env, handle.db, app.log, { storage });
        if (env.demoOnFirstStart && (await countUsers(handle.db)) === 0) {
          const seed = await seedDemo(handle.db, url);
          hooks.onDemoSeeded?.(seed, await scheduleDemoPost(handle.db, seed, url, new Date()));
        }
        keys = await watchApiKeys(handle);
        state.attach(deps, keys.cache);
        if (env.inProcessWorker) worker = await startWorker(deps, env.workerConcurrency, handle);
        return;
      } catch (err) {
        await keys?.stop().catch(() => {});
        keys = undefined;
        await handle?.close().catch(() => {});
        handle = undefined;
        if (closing || !isDatabaseUnavailable(err)) throw err;
        app.log.warn(`database not available at start; retrying in ${STARTUP_RETRY_MS / 1000}s`);
        await new Promise((r) => setTimeout(r, STARTUP_RETRY_MS));
      }
    }
  })();

  const close = async () => {
    closing = true;
    await app.close();
    await ready.catch(() => {});
    // The worker finishes the posts in hand before the database goes: an interrupted call would only be repeated later.
    await worker?.stop();
    await keys?.stop();
    await handle?.close();
  };
  return { app, url, ready, close };
}

/** Runs until SIGINT/SIGTERM, then stops accepting requests, finishes those in flight and closes the database. */
export function closeOnSignals(server: RunningServer): void {
  closeWithGrace({ delay: 10_000 }, async ({ err, signal }) => {
    if (err) server.app.log.error({ errorName: err.name }, 'shutting down after an unexpected error');
    else server.app.log.info({ signal }, 'shutting down');
    await server.close();
  });
}
