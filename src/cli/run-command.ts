import type { Kysely } from 'kysely';
import { readEnvironment } from './wiring/configuration.js';
import { pendingMigrations } from '../db/migrate.js';
import { openDatabase } from '../db/open-database.js';
import type { Database } from '../db/schema.js';

export interface CommandDatabase {
  db: Kysely<Database>;
}

/**
 * Opens the configured database, runs one command, prints its result as one JSON object on stdout
 * and closes the database. Any failure is one line on stderr and a non-zero exit.
 */
export async function runCommand(action: (ctx: CommandDatabase) => Promise<object>, options: { requireMigrated?: boolean } = {}): Promise<void> {
  try {
    const env = readEnvironment();
    const handle = await openDatabase(env);
    try {
      if (options.requireMigrated !== false) {
        const pending = await pendingMigrations(handle.db);
        if (pending.length > 0) throw new Error(`The database has ${pending.length} pending migration(s); run "herald db migrate" first`);
      }
      const result = await action({ db: handle.db });
      process.stdout.write(`${JSON.stringify(result)}\n`);
    } finally {
      await handle.close();
    }
  } catch (err) {
    fail(err);
  }
}

export function fail(err: unknown): void {
  let message = err instanceof Error ? err.message : String(err);
  // A validation failure names each field, as the API's details do.
  const details = (err as { details?: { path: (string | number)[]; message: string }[] }).details;
  if (Array.isArray(details) && details.length > 0) message += `: ${details.map((d) => `${d.path.join('.')} ${d.message}`).join('; ')}`;
  process.stderr.write(`herald: ${message.split('\n')[0]}\n`);
  process.exitCode = 1;
}
