import type { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely';
import pg from 'pg';
import { listenOnEmbedded, listenOnPostgres, type ChannelHandlers, type StopListening } from './notifications.js';
import type { Database } from './schema.js';
import { HERALD_TYPES } from './timestamps.js';

/** An open database: the Kysely instance and how to close everything beneath it. */
export interface DatabaseHandle {
  readonly db: Kysely<Database>;
  readonly backend: 'postgres' | 'embedded';
  close(): Promise<void>;
  /** Hears the database's notifications on `channel` (a handle borrowed from a running server cannot). */
  listen?(channel: string, handlers: ChannelHandlers): Promise<StopListening>;
}

/** How long a request waits for a Postgres connection before the database counts as unavailable. */
const CONNECT_TIMEOUT_MS = 3000;
/** The longest one statement may run on the server; no statement of Herald's comes near it. */
const STATEMENT_TIMEOUT_MS = 30_000;
/** The client's own bound, for a server that stops answering without closing the connection. */
const QUERY_TIMEOUT_MS = STATEMENT_TIMEOUT_MS + 5000;
/** A transaction left open (its process stalled) gives its locks back after this. */
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;

export function openPostgres(connectionString: string, onConnectionError: (err: Error) => void = () => {}): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
    keepAlive: true,
    max: 10,
    types: HERALD_TYPES,
  });
  // A client losing its server must not crash the process; the next query reconnects. The pool only
  // listens while a client is idle, and a dead client can be checked out before its error arrives.
  pool.on('error', onConnectionError);
  pool.on('connect', (client) => client.on('error', onConnectionError));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparing(pool) }) });
  return {
    db,
    backend: 'postgres',
    close: () => db.destroy(),
    listen: (channel, handlers) => listenOnPostgres({ connectionString, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true }, channel, handlers),
  };
}

/** Beyond this many distinct statements, new ones go unnamed: a server-side cache that cannot grow without bound. */
const MAX_PREPARED_STATEMENTS = 1000;

/**
 * Runs every statement with parameters as a named prepared statement, so that each connection
 * has Postgres parse and plan it once rather than on every call (Kysely sends them unnamed). The
 * same text always gets the same name; pg prepares it on a connection the first time it is used
 * there. Statements without parameters (BEGIN, COMMIT, multi-statement scripts) go unnamed, by the simple protocol.
 */
function preparing(pool: pg.Pool): PostgresPool {
  const names = new Map<string, string>();
  const nameOf = (text: string): string | undefined => {
    let name = names.get(text);
    if (name === undefined && names.size < MAX_PREPARED_STATEMENTS) {
      name = `herald_${names.size}`;
      names.set(text, name);
    }
    return name;
  };
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  return {
    async connect() {
      const client = await pool.connect();
      let wrapper = wrapped.get(client);
      if (wrapper === undefined) {
        wrapper = {
          query: ((text: string, values?: unknown[]) => {
            const name = values !== undefined && values.length > 0 ? nameOf(text) : undefined;
            // Always one shape of call: a plain string now and then (the in-process worker's BEGIN or
            // its look) deoptimized pg's query path under load, and seconds of slow, promoting
            // collections followed (p99 ×2).
            return client.query({ name, text, values });
          }) as unknown as PostgresPoolClient['query'],
          release: () => client.release(),
        };
        wrapped.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}

/**
 * Postgres's memory settings for the embedded database: its defaults (128 MB of shared buffers) are
 * most of PGlite's memory, and far more than one user's service reads. Resident memory of an opened
 * database: 304 MB with the defaults, 195 MB with 32 MB of buffers, 169 MB with these.
 */
const EMBEDDED_SETTINGS = ['shared_buffers=16MB', 'wal_buffers=64kB'];

export interface EmbeddedOptions {
  /** An instance the caller opened and will close itself (e.g. to dump it afterwards). */
  instance?: PGlite;
  /** Folder holding the database files; omitted for an in-memory database. */
  dataDir?: string;
  /** A dump (from PGlite's dumpDataDir) to start from, e.g. an already migrated template. */
  loadDataDir?: Blob;
}

/**
 * PGlite behind its node-postgres adapter, so Kysely runs the same dialect and type parsing as on Postgres.
 * One pool of size one per instance: two pools on one PGlite share a session and roll back each other's work.
 */
export async function openEmbedded(options: EmbeddedOptions = {}): Promise<DatabaseHandle> {
  const owned = options.instance === undefined;
  // Loaded only here: a CLI call or server on Postgres never pays for PGlite (~40 ms, ~4 MB at start).
  const [{ PGlite }, { createPgConfig }] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite/node-postgres')]);
  const pglite =
    options.instance ??
    (await PGlite.create(options.dataDir, {
      startParams: [...PGlite.defaultStartParams, ...EMBEDDED_SETTINGS.flatMap((setting) => ['-c', setting])],
      ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
    }));
  const pool = new pg.Pool({ ...createPgConfig(pglite), types: HERALD_TYPES });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    backend: 'embedded',
    listen: (channel, handlers) => listenOnEmbedded(pglite, channel, handlers),
    async close() {
      await db.destroy();
      // The adapter does not own the instance, so closing the pool leaves it open.
      if (owned) await pglite.close();
    },
  };
}
