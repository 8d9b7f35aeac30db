import { Migrator, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import { migrations } from './migrations/index.js';

function migratorFor(db: Kysely<Database>): Migrator {
  return new Migrator({ db, provider: { getMigrations: () => Promise.resolve(migrations) } });
}

/** Names of migrations not yet applied to this database. */
export async function pendingMigrations(db: Kysely<Database>): Promise<string[]> {
  const all = await migratorFor(db).getMigrations();
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name);
}

/** Applies every pending migration; returns the names applied, or throws naming the one that failed. */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const { error, results = [] } = await migratorFor(db).migrateToLatest();
  const failed = results.find((r) => r.status === 'Error');
  if (error !== undefined || failed) {
    const name = failed ? ` ${failed.migrationName}` : '';
    const reason = error instanceof Error ? `: ${error.message}` : '';
    throw new Error(`Migration${name} failed${reason}`, { cause: error });
  }
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
