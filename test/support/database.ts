import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { inject } from 'vitest';
import { openEmbedded, openPostgres, type DatabaseHandle } from '../../src/data/database.js';
import { migrateToLatest } from '../../src/data/migrate.js';

/** The Postgres server the suite runs on, when it runs on Postgres rather than the embedded default. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;

export interface TestDatabase extends DatabaseHandle {
  /** A connection string reaching this same database (Postgres only). */
  url: string | undefined;
}

/**
 * A fresh, migrated database for one test file: a copy of the migrated embedded template, or a new
 * Postgres database created on TEST_DATABASE_URL's server and dropped on close.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (TEST_DATABASE_URL === undefined) {
    const template = await readFile(inject('embeddedTemplatePath'));
    const handle = await openEmbedded({ loadDataDir: new Blob([template]) });
    return { ...handle, url: undefined };
  }
  const name = `herald_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`create database ${name}`);
  const url = withDatabase(TEST_DATABASE_URL, name);
  const handle = openPostgres(url);
  await migrateToLatest(handle.db);
  return {
    ...handle,
    url,
    async close() {
      await handle.close();
      await adminQuery(`drop database if exists ${name} with (force)`);
    },
  };
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
