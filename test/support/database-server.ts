import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { EmbeddedServer } from '../../src/db/embedded-server.js';
import { openPostgres } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';

/** The PostgreSQL server a test run uses, and the migrated database each test file's database is cloned from. */
export interface TestDatabaseServer {
  /** A connection string to the server's `postgres` database, from which test databases are created and dropped. */
  url: string;
  template: string;
  close(): Promise<void>;
}

/**
 * The server at `url` (TEST_DATABASE_URL), else an embedded one started for the run in a folder of
 * its own. Either way a template database is created and migrated once, under a name of its own so
 * that runs sharing a server do not meet.
 */
export async function startTestDatabaseServer(url: string | undefined): Promise<TestDatabaseServer> {
  let embedded: EmbeddedServer | undefined;
  if (url === undefined) {
    const dir = await mkdtemp(join(tmpdir(), 'herald-pg-'));
    // Under root, PostgreSQL runs as the user postgres, who must be able to enter the folder.
    await chmod(dir, 0o711);
    embedded = new EmbeddedServer(dir, { ephemeral: true });
    try {
      await embedded.start();
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
    url = embedded.url();
  }
  const serverUrl = url;
  const template = `herald_template_${randomBytes(6).toString('hex')}`;
  const stopEmbedded = async () => {
    if (embedded === undefined) return;
    await embedded.stop();
    await rm(embedded.dataDir, { recursive: true, force: true });
  };
  try {
    await adminQuery(serverUrl, `create database ${template}`);
    const handle = openPostgres(withDatabase(serverUrl, template));
    try {
      await migrateToLatest(handle.db);
    } finally {
      await handle.close();
    }
    await adminQuery(serverUrl, `alter database ${template} with is_template true allow_connections false`);
  } catch (err) {
    await stopEmbedded();
    throw err;
  }
  return {
    url: serverUrl,
    template,
    async close() {
      try {
        await adminQuery(serverUrl, `alter database ${template} with is_template false`);
        await adminQuery(serverUrl, `drop database if exists ${template}`);
      } finally {
        await stopEmbedded();
      }
    },
  };
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
