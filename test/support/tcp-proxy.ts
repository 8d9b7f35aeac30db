import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { afterAll, beforeAll } from 'vitest';
import { createTestDatabase, type TestDatabase } from './database.js';

/** Where a proxy forwards to: a TCP address, or a Unix socket's path. */
export type ProxyTarget = { host: string; port: number } | { path: string };

/** A simple-protocol Query message ('Q', its length, the text) of COMMIT, as Kysely's pg driver sends it. */
const COMMIT_QUERY = Buffer.from('Q\u0000\u0000\u0000\u000bcommit\u0000', 'latin1');

/** A TCP forwarder on 127.0.0.1 (or on a Unix socket's path) that a test can cut and restore, to make a database vanish and return. */
export class TcpProxy {
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  port = 0;

  constructor(
    private readonly target: ProxyTarget,
    private readonly listenAt?: { path: string },
  ) {}

  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.target);
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on('close', () => this.#sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      // Each way through a tap, so a test can let a COMMIT through and lose its answer.
      const connection = { upstream, client, committed: false };
      client.pipe(this.#tap('toServer', connection)).pipe(upstream).pipe(this.#tap('toClient', connection)).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.listenAt ?? { port: this.port, host: '127.0.0.1' }, () => resolve());
    });
    const address = server.address();
    if (typeof address === 'object' && address !== null) this.port = address.port;
    this.#server = server;
  }

  /**
   * The next COMMIT a client sends reaches the server; its answer never reaches the client, whose
   * connection is cut: a transaction that committed while its client saw the database go away.
   * Resolves once that has happened.
   */
  commitThenDrop(): Promise<void> {
    return new Promise((resolve) => {
      this.#commitThenDrop = { taken: false, done: resolve };
    });
  }

  #commitThenDrop: { taken: boolean; done: () => void } | undefined;

  #tap(way: 'toServer' | 'toClient', connection: { upstream: Socket; client: Socket; committed: boolean }): Transform {
    return new Transform({
      transform: (chunk: Buffer, _encoding, next) => {
        const drop = this.#commitThenDrop;
        if (way === 'toServer' && drop !== undefined && !drop.taken && chunk.includes(COMMIT_QUERY)) {
          drop.taken = true;
          connection.committed = true;
        } else if (way === 'toClient' && connection.committed) {
          // The server's answer to the COMMIT: it committed; the client never hears so.
          this.#commitThenDrop = undefined;
          connection.client.destroy();
          connection.upstream.destroy();
          drop?.done();
          next();
          return;
        }
        next(null, chunk);
      },
    });
  }

  /** Refuses new connections and drops the open ones, as a database going down would. */
  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const s of this.#sockets) s.destroy();
    if (server) await new Promise((r) => server.close(r));
  }
}

export interface ProxiedDatabase {
  database: TestDatabase;
  proxy: TcpProxy;
  /** A connection string to the database through the proxy. */
  url: string;
}

/** A fresh Postgres test database for one test file, reached through a proxy the test can cut and restore. */
export function useProxiedDatabase(): ProxiedDatabase {
  const proxied = {} as ProxiedDatabase;
  beforeAll(async () => {
    proxied.database = await createTestDatabase();
    const target = new URL(proxied.database.url);
    const port = Number(target.port || 5432);
    // The run's embedded server is reached over its socket (a `host` parameter naming a folder).
    const socketDir = target.searchParams.get('host');
    proxied.proxy = new TcpProxy(socketDir?.startsWith('/') ? { path: join(socketDir, `.s.PGSQL.${port}`) } : { host: target.hostname, port });
    await proxied.proxy.start();
    const through = new URL(target);
    through.searchParams.delete('host');
    through.hostname = '127.0.0.1';
    through.port = String(proxied.proxy.port);
    proxied.url = through.toString();
  });
  afterAll(async () => {
    await proxied.proxy?.stop();
    await proxied.database?.close();
  });
  return proxied;
}
