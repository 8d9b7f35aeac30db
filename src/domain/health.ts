import { sql, type Kysely } from 'kysely';
import { pendingMigrations } from '../db/migrate.js';
import type { Database } from '../db/schema.js';
import type { Readiness } from './api-types.js';

/** How long the database has to answer a readiness check. */
export const READINESS_TIMEOUT_MS = 2000;

/**
 * Whether the service can serve: its database answers in time and has every migration applied.
 * `db` is undefined while the service is still opening it.
 */
export async function checkReadiness(db: Kysely<Database> | undefined): Promise<Readiness> {
  if (db === undefined) return notReady('down', 'unknown', 'Not ready: the database is not open yet');
  let pending: string[];
  try {
    pending = await withinTimeout(
      (async () => {
        await sql`select 1`.execute(db);
        return pendingMigrations(db);
      })(),
    );
  } catch {
    return notReady('down', 'unknown', 'Not ready: the database is not available');
  }
  if (pending.length > 0) {
    const count = pending.length === 1 ? '1 migration pending' : `${pending.length} migrations pending`;
    return notReady('up', 'pending', `Not ready: ${count}; run herald db migrate`);
  }
  return { ready: true, database: 'up', migrations: 'applied' };
}

function notReady(database: Readiness['database'], migrations: Readiness['migrations'], error: string): Readiness {
  return { error, ready: false, database, migrations };
}

async function withinTimeout<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('readiness check timed out')), READINESS_TIMEOUT_MS);
  });
  // A late answer after the timeout is dropped; its rejection must not go unhandled.
  work.catch(() => {});
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
