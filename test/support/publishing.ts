import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { readEnvironment } from '../../src/cli/wiring/configuration.js';
import type { Database } from '../../src/db/schema.js';
import type { Dependencies } from '../../src/domain/dependencies.js';
import type { PublishingSettings } from '../../src/domain/publishing/settings.js';
import type { MediaStorage } from '../../src/domain/ports/media-storage.js';
import { createDependencies } from '../../src/cli/wiring/dependencies.js';
import { keepHouse } from '../../src/worker/housekeeping.js';
import { drain, drainDeliveries } from '../../src/worker/worker.js';
import { runLogger } from './run-log.js';

export interface TestPublishing {
  /** The workers' dependencies: their own clock, short retries. */
  deps: Dependencies;
  /** What the API's operations get: the same adapters, real time. */
  serviceDeps: Dependencies;
  /** Publishes everything due, as `herald worker --once` does; how many posts it acted on. */
  drain(concurrency?: number): Promise<number>;
  /** Sends every webhook delivery due now, as `herald worker --once` does; how many attempts it made. */
  deliver(): Promise<number>;
  /** Sends deliveries, retries included, until none is waiting (bounded: 20 s). */
  deliverAll(): Promise<void>;
  /** Keeps house as a running worker does every 15 minutes, by the workers' clock; false when another process was at it. */
  keepHouse(): Promise<boolean>;
  /** What the road logged, for tests that look for leaks. */
  logged: string[];
  /** Sets the workers' clock this far ahead of real time (only theirs: the API keeps real time), so a post comes due without waiting. */
  runAhead(ms: number): void;
  /** Drains with the workers' clock this far ahead (a retry comes due), then sets it back. */
  drainAhead(ms: number): Promise<number>;
  close(): Promise<void>;
}

/**
 * The production road (sandbox and live publishers, vault, SSRF guard allowing 127.0.0.1)
 * on a test database, with settings a test can shorten: backoff in milliseconds, a short lease.
 */
export async function startTestPublishing(
  db: Kysely<Database>,
  media: MediaStorage | Pick<Dependencies, 'storage' | 'probe' | 'maxUploadBytes'>,
  settings: Partial<PublishingSettings> = {},
  /** More of the environment, e.g. a platform's app and the fake that stands in for its hosts. */
  moreEnv: Record<string, string> = {},
): Promise<TestPublishing> {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-publishing-'));
  const env = readEnvironment({
    HERALD_DATA_DIR: dataDir,
    HERALD_SECRET_KEY: randomBytes(32).toString('base64'),
    HERALD_ALLOW_PRIVATE_NETWORK: 'true',
    // Webhook retries in milliseconds (20, 100, 500 ms), four attempts, half a second to answer.
    HERALD_WEBHOOK_TIMEOUT_MS: '500',
    HERALD_WEBHOOK_RETRY_BASE_MS: '20',
    ...moreEnv,
  });
  const logged: string[] = [];
  const runLog = runLogger();
  const log = {
    info: (fields: object, message: string) => {
      logged.push(JSON.stringify({ ...fields, message }));
      runLog.info(fields, message);
    },
    error: (fields: object, message: string) => {
      logged.push(JSON.stringify({ ...fields, message }));
      runLog.error(fields, message);
    },
  };
  const serviceDeps = await createDependencies(env, db, log, 'storage' in media ? media : { storage: media });
  if ('maxUploadBytes' in media) serviceDeps.maxUploadBytes = media.maxUploadBytes;
  let offsetMs = 0;
  const deps: Dependencies = {
    ...serviceDeps,
    now: () => new Date(Date.now() + offsetMs),
    // Work a platform is still doing is looked at again every 10 ms (HERALD_POLL_INTERVAL_MS), not at the platform's pace.
    settings: { ...serviceDeps.settings, backoffBaseMs: 60_000, maxBackoffMs: 120_000, liveSpacingMs: 0, pollIntervalMs: 10, ...settings },
    webhooks: { ...serviceDeps.webhooks, settings: { ...serviceDeps.webhooks.settings, maxAttempts: 4 } },
  };
  return {
    deps,
    serviceDeps,
    drain: (concurrency = 2) => drain(deps, concurrency),
    deliver: () => drainDeliveries(deps, 2),
    async deliverAll() {
      for (const end = Date.now() + 20_000; ;) {
        await drainDeliveries(deps, 2);
        const waiting = await db.selectFrom('webhook_deliveries').select('id').where('due_at', 'is not', null).limit(1).executeTakeFirst();
        if (waiting === undefined) return;
        if (Date.now() > end) throw new Error('webhook deliveries still waiting after 20 s');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    keepHouse: () => keepHouse(deps),
    logged,
    runAhead(ms) {
      offsetMs = ms;
    },
    async drainAhead(ms) {
      offsetMs = ms;
      try {
        return await drain(deps, 2);
      } finally {
        offsetMs = 0;
      }
    },
    async close() {
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
