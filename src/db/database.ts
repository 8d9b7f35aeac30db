import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely';
import pg from 'pg';
import { isDatabaseUnavailable } from './connection-errors.js';
import { listenOnPostgres, type ChannelHandlers, type StopListening } from './notifications.js';
import type { Database } from './schema.js';

/** An open database: the Kysely instance and how to close everything beneath it. */
export interface DatabaseHandle {
  readonly db: Kysely<Database>;
  close(): Promise<void>;
  /** Hears the database's notifications on `channel`. */
  listen(channel: string, handlers: ChannelHandlers): Promise<StopListening>;
}

/** How long a request waits for a Postgres connection before the database counts as unavailable. */
const CONNECT_TIMEOUT_MS = 3000;
/** The longest one statement may run on the server; no statement of Herald's comes near it. */
const STATEMENT_TIMEOUT_MS = 30_000;
/** The client's own bound, for a server that stops answering without closing the connection. */
const QUERY_TIMEOUT_MS = STATEMENT_TIMEOUT_MS + 5000;
/** A transaction left open (its process stalled) gives its locks back after this. */
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;

/** A server Herald runs itself (the embedded PostgreSQL). */
export interface OwnServer {
  /** Starts it when a connection finds it gone (stopped by the last process that used it, or crashed), before trying once more. */
  start(): Promise<void>;
  /** The first statement of every session. */
  sessionStart: string;
  /** The application_name of every session of this process. */
  sessionName: string;
}

export function openPostgres(connectionString: string, onConnectionError: (err: Error) => void = () => {}, server?: OwnServer): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
    keepAlive: true,
    max: 10,
    ...(server === undefined ? {} : { application_name: server.sessionName }),
  });
  // A client losing its server must not crash the process; the next query reconnects. The pool only
  // listens while a client is idle, and a dead client can be checked out before its error arrives.
  pool.on('error', onConnectionError);
  // The pool's end resolves before its connections have closed. On a server of Herald's own, close
  // waits for them, so that afterwards none of this handle's sessions is left on it (a remote server
  // that stopped answering could hold that wait for as long as TCP keeps trying).
  const connected = new Set<pg.Client>();
  pool.on('connect', (client) => {
    client.on('error', onConnectionError);
    connected.add(client);
    client.once('end', () => connected.delete(client));
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparing(pool, server) }) });
  return {
    db,
    async close() {
      const closing = server === undefined ? [] : [...connected].map((client) => new Promise((resolve) => client.once('end', resolve)));
      await db.destroy();
      await Promise.all(closing);
    },
    listen: (channel, handlers) =>
      listenOnPostgres(
        {
          connectionString,
          connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
          keepAlive: true,
          ...(server === undefined ? {} : { application_name: server.sessionName }),
        },
        channel,
        handlers,
        server?.sessionStart,
      ),
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
function preparing(pool: pg.Pool, server: OwnServer | undefined): PostgresPool {
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
  const connect = async () => {
    const client = await pool.connect();
    if (server !== undefined && !wrapped.has(client)) {
      await client.query(server.sessionStart).catch((err: Error) => {
        client.release(err);
        throw err;
      });
    }
    return client;
  };
  return {
    async connect() {
      const client = await connect().catch(async (err: unknown) => {
        if (server === undefined || !isDatabaseUnavailable(err)) throw err;
        await server.start().catch(() => Promise.reject(err as Error));
        return connect();
      });
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
