import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { errorName } from '../domain/errors.js';
import { purgeEndedConnections } from '../domain/connections.js';
import { purgeExpiredIdempotencyKeys } from '../domain/idempotency.js';
import { announceEndingCredentials, renewEndingCredentials } from '../domain/live-accounts.js';
import { removeAbandonedUploads, removeOrphanFiles } from '../domain/media/abandoned-uploads.js';
import type { Dependencies } from '../domain/dependencies.js';
import { deleteExpiredEvents } from '../domain/webhooks/retention.js';

/** How often a running worker keeps house. */
const HOUSEKEEPING_INTERVAL_MS = 15 * 60_000;
/** Held for a whole run, so that of several workers one does the work and the others skip it. */
const HOUSEKEEPING_LOCK = sql`hashtextextended('herald.housekeeping', 0)`;

/**
 * Deletes what has outlived its use: expired idempotency keys, webhook events past their
 * retention (with their deliveries and attempts), the staged files of abandoned uploads, stored
 * files no medium names, connections ended a week ago and instance apps that never connected
 * anyone in a week; renews
 * credentials that end unless refreshed; and tells of accounts whose credentials end soon or
 * have ended. Returns
 * false, having done nothing, while another process is at it.
 */
export async function keepHouse(deps: Dependencies, sweep: StoredFilesSweep = {}): Promise<boolean> {
  // One connection for the run: a session's advisory lock is released only on the connection that took it.
  return deps.db.connection().execute(async (db: Kysely<Database>) => {
    const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${HOUSEKEEPING_LOCK}) as locked`.execute(db);
    if (rows[0]?.locked !== true) return false;
    try {
      const now = deps.now();
      const keys = await purgeExpiredIdempotencyKeys(db, now);
      const events = await deleteExpiredEvents(db, deps.webhooks.settings, now);
      const uploads = await removeAbandonedUploads(deps.storage, now);
      const { removed: orphans, next } = await removeOrphanFiles(db, deps.storage, now, sweep.next);
      sweep.next = next;
      const consent = await purgeEndedConnections(db, now);
      const renewals = await renewEndingCredentials({ ...deps, db }, now);
      const credentials = await announceEndingCredentials(db, now);
      deps.log.info(
        { keys, events, uploads, orphans, connections: consent.connections, instanceApps: consent.instanceApps, ...renewals, ...credentials },
        'housekeeping: expired keys, events, uploads, files no medium names, ended connections and unused instance apps removed; ending credentials renewed or announced',
      );
      return true;
    } finally {
      await sql`select pg_advisory_unlock(${HOUSEKEEPING_LOCK})`.execute(db);
    }
  });
}

/** Where a process's next look for stored files no medium names goes on from (removeOrphanFiles). */
export interface StoredFilesSweep {
  next?: string | undefined;
}

/**
 * Keeps house at once, then 15 minutes after each run, until stopped: a worker restarted more
 * often than that still keeps house, and of workers started together one does it.
 */
export function keepHouseEvery(deps: Dependencies): { stop(): Promise<void> } {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout;
  const sweep: StoredFilesSweep = {};
  const plan = (ms: number) => {
    timer = setTimeout(() => {
      running = keepHouse(deps, sweep)
        .then(
          () => {},
          (error: unknown) => deps.log.error({ errorName: errorName(error) }, 'housekeeping failed; it runs again at its next time'),
        )
        .finally(() => {
          if (!stopped) plan(HOUSEKEEPING_INTERVAL_MS);
        });
    }, ms);
    timer.unref();
  };
  plan(0);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
