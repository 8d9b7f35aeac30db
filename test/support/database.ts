import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { openPostgres, type DatabaseHandle } from '../../src/db/database.js';
import { adminQuery, withDatabase } from './database-server.js';

/** The PostgreSQL server the suite runs on when one is named (CI: Debian's 15); unset, an embedded one the run starts. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;

export interface TestDatabase extends DatabaseHandle {
  /** A connection string reaching this same database. */
  url: string;
}

/**
 * A database of its own for one test file on the run's server, dropped on close: a copy of the
 * migrated template (`blank`: an empty one, no migrations applied).
 */
export async function createTestDatabase(options: { blank?: boolean } = {}): Promise<TestDatabase> {
  const server = inject('databaseServerUrl');
  const name = `herald_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(server, options.blank ? `create database ${name}` : `create database ${name} template ${inject('templateDatabase')}`);
  const url = withDatabase(server, name);
  const handle = openPostgres(url);
  return {
    ...handle,
    url,
    async close() {
      await handle.close();
      await adminQuery(server, `drop database if exists ${name} with (force)`);
    },
  };
}
