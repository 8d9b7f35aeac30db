import { chmod, rm } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { deserialize, serialize } from 'node:v8';
import { CompiledQuery, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type DatabaseConnection, type Driver, type QueryResult, type TransactionSettings } from 'kysely';
import type { DatabaseHandle } from './database.js';
import type { Database } from './schema.js';

/**
 * A running server on the embedded database shares it with the CLI through a Unix socket in the
 * data folder: a CLI command then runs its statements through the server's open database, rather
 * than starting a database of its own (seconds and hundreds of MB), which the folder's lock would
 * refuse anyway. The socket is the owner's alone (mode 0600), like the database files beside it.
 * Each message is a length and a v8-serialized value, so dates, bigints and buffers arrive as they left.
 */
export const CHANNEL_FILE = 'herald.sock';

/**
 * A command that stops talking is disconnected after this: inside a transaction it holds the
 * embedded database's only connection, which the server's requests wait for.
 */
const IDLE_SESSION_MS = 30_000;
/** Longer socket paths than this do not fit in a Unix socket address. */
const MAX_SOCKET_PATH = 100;

interface Request {
  sql: string;
  parameters: readonly unknown[];
}

type Reply = { rows: unknown[]; numAffectedRows?: bigint } | { error: ChannelError };

/** What a client learns of a failed statement: Postgres's own error fields, as a local database would give them. */
interface ChannelError {
  message: string;
  code?: string;
  constraint?: string;
  detail?: string;
}

function frame(value: unknown): Buffer {
  const body = serialize(value);
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length);
  return Buffer.concat([head, body]);
}

/** Calls `onMessage` with each whole message the socket delivers. */
function readFrames(socket: Socket, onMessage: (message: unknown) => void): void {
  let pending = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 4) {
      const length = pending.readUInt32BE(0);
      if (pending.length < 4 + length) return;
      const body = pending.subarray(4, 4 + length);
      pending = pending.subarray(4 + length);
      let message: unknown;
      try {
        message = deserialize(body);
      } catch {
        socket.destroy();
        return;
      }
      onMessage(message);
    }
  });
}

/** Starts sharing; resolves to how to stop. A folder whose path is too long for a socket is not shared. */
export async function shareEmbedded(handle: DatabaseHandle, socketPath: string, onError: (err: Error) => void): Promise<() => Promise<void>> {
  if (socketPath.length > MAX_SOCKET_PATH) return async () => {};
  // The caller holds the folder's lock, so a socket file left here is a crashed server's.
  await rm(socketPath, { force: true });
  const sessions = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sessions.add(socket);
    socket.once('close', () => sessions.delete(socket));
    serveSession(handle, socket).catch((err: Error) => {
      onError(err);
      socket.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  await chmod(socketPath, 0o600);
  return async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of sessions) socket.destroy();
    await closed;
    await rm(socketPath, { force: true });
  };
}

/**
 * One CLI command's statements, in order. Each runs on a connection of the server's taken for it
 * alone, or for the whole of its transaction: between them the server's own requests go on, and a
 * command that ends (or dies) inside a transaction has it rolled back.
 */
async function serveSession(handle: DatabaseHandle, socket: Socket): Promise<void> {
  socket.setTimeout(IDLE_SESSION_MS, () => socket.destroy());
  const queue: Request[] = [];
  let wake: (() => void) | undefined;
  let open = true;
  readFrames(socket, (message) => {
    queue.push(message as Request);
    wake?.();
  });
  socket.once('close', () => {
    open = false;
    wake?.();
  });
  const next = async (): Promise<Request | undefined> => {
    while (queue.length === 0 && open) await new Promise<void>((resolve) => (wake = resolve));
    return queue.shift();
  };
  for (let request = await next(); request !== undefined; request = await next()) {
    const first = request;
    await handle.db.connection().execute(async (db) => {
      let inTransaction = false;
      for (let current: Request | undefined = first; current !== undefined; current = inTransaction ? await next() : undefined) {
        const reply = await run(db, current);
        if (open) socket.write(frame(reply));
        if (TRANSACTION_START.test(current.sql)) inTransaction = !('error' in reply);
        else if (TRANSACTION_END.test(current.sql)) inTransaction = false;
      }
      if (inTransaction) await db.executeQuery(CompiledQuery.raw('rollback')).catch(() => {});
    });
  }
}

const TRANSACTION_START = /^\s*(begin|start transaction)\b/i;
const TRANSACTION_END = /^\s*(commit|rollback|end)\s*$/i;

async function run(db: Kysely<Database>, request: Request): Promise<Reply> {
  try {
    const result = await db.executeQuery(CompiledQuery.raw(request.sql, [...request.parameters]));
    return { rows: result.rows, ...(result.numAffectedRows === undefined ? {} : { numAffectedRows: result.numAffectedRows }) };
  } catch (err) {
    const e = err as ChannelError;
    return { error: { message: e.message, code: e.code, constraint: e.constraint, detail: e.detail } };
  }
}

/**
 * The embedded database through the server holding the folder, or undefined when none answers
 * on its socket (no server, or one too old to share).
 */
export async function openThroughRunningServer(socketPath: string): Promise<DatabaseHandle | undefined> {
  const socket = await new Promise<Socket | undefined>((resolve) => {
    const s = createConnection(socketPath);
    s.once('connect', () => resolve(s));
    s.once('error', () => resolve(undefined));
  });
  if (socket === undefined) return undefined;
  const connection = new ChannelConnection(socket);
  const db = new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new ChannelDriver(connection),
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  return { db, backend: 'embedded', close: () => db.destroy() };
}

class ChannelConnection implements DatabaseConnection {
  readonly #socket: Socket;
  readonly #waiting: { resolve(reply: Reply): void; reject(err: Error): void }[] = [];

  constructor(socket: Socket) {
    this.#socket = socket;
    readFrames(socket, (message) => this.#waiting.shift()?.resolve(message as Reply));
    socket.on('error', () => {});
    socket.once('close', () => {
      for (const waiting of this.#waiting.splice(0)) waiting.reject(new Error('The running Herald server closed the connection to its database'));
    });
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const reply = await new Promise<Reply>((resolve, reject) => {
      this.#waiting.push({ resolve, reject });
      this.#socket.write(frame({ sql: query.sql, parameters: query.parameters } satisfies Request));
    });
    if ('error' in reply) throw Object.assign(new Error(reply.error.message), reply.error);
    return reply as QueryResult<R>;
  }

  /** Kysely asks every connection for it; no command streams. */
  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('Streaming is not available through the running server');
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#socket.end(resolve));
  }
}

/** One connection, taken by one user at a time: the statements of a transaction must not interleave with others. */
class ChannelDriver implements Driver {
  readonly #connection: ChannelConnection;
  #free: Promise<void> = Promise.resolve();
  #release: (() => void) | undefined;

  constructor(connection: ChannelConnection) {
    this.#connection = connection;
  }

  init(): Promise<void> {
    return Promise.resolve();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const previous = this.#free;
    let release!: () => void;
    this.#free = new Promise((resolve) => (release = resolve));
    await previous;
    this.#release = release;
    return this.#connection;
  }

  releaseConnection(): Promise<void> {
    this.#release?.();
    return Promise.resolve();
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const modes = [settings.isolationLevel && `isolation level ${settings.isolationLevel}`, settings.accessMode].filter(Boolean).join(' ');
    await connection.executeQuery(CompiledQuery.raw(modes ? `start transaction ${modes}` : 'begin'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async destroy(): Promise<void> {
    await this.#connection.close();
  }
}
