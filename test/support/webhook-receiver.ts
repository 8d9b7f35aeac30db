import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll } from 'vitest';

export interface ReceivedWebhook {
  headers: Record<string, string>;
  body: string;
  json: unknown;
  receivedAt: number;
}

/** How to answer one request: a status (after an optional delay), or never. */
export type Answer = { status: number; body?: string; delayMs?: number } | { hang: true };

export interface TestReceiver {
  /** http://127.0.0.1:PORT/hooks */
  url: string;
  received: ReceivedWebhook[];
  /** Answers the next requests with these, in order; once used up, answers 204. */
  answer(...answers: Answer[]): void;
  /** Resolves with everything received so far once at least n requests have arrived; rejects after timeoutMs. */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1 that records every request and answers as the test says. */
export async function startTestReceiver(): Promise<TestReceiver> {
  const received: ReceivedWebhook[] = [];
  const answers: Answer[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
      let json: unknown;
      try {
        json = JSON.parse(body) as unknown;
      } catch {
        json = undefined;
      }
      received.push({ headers, body, json, receivedAt: Date.now() });
      const answer = answers.shift() ?? { status: 204 };
      if ('hang' in answer) return;
      setTimeout(() => {
        res.writeHead(answer.status, { 'content-type': 'text/plain' });
        res.end(answer.body ?? '');
      }, answer.delayMs ?? 0);
    });
  });
  const { port, close } = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    answer(...next) {
      answers.push(...next);
    },
    async waitFor(n, timeoutMs = 15_000) {
      for (const end = Date.now() + timeoutMs; received.length < n;) {
        if (Date.now() > end) throw new Error(`received ${received.length} webhook requests, expected ${n}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return [...received];
    },
    close,
  };
}

/** One receiver for the whole test file, started before its tests and closed after them. */
export function useTestReceiver(): TestReceiver {
  const receiver = {} as TestReceiver;
  beforeAll(async () => {
    Object.assign(receiver, await startTestReceiver());
  });
  afterAll(async () => {
    await receiver.close?.();
  });
  return receiver;
}

/** Whether the request's webhook-signature verifies with this secret, as a Standard Webhooks receiver checks it (timestamp tolerance included). */
export function verifiedWith(received: ReceivedWebhook, secret: string): boolean {
  try {
    new Webhook(secret).verify(received.body, received.headers);
    return true;
  } catch {
    return false;
  }
}

export interface Tarpit {
  /** http://127.0.0.1:PORT, to which a test appends a path per endpoint. */
  url: string;
  /** The path of every request received, in order. */
  received: string[];
  /** Requests held open now: in all, or to one path. */
  open(path?: string): number;
  /** The most requests ever held open at once: in all, or to one path. */
  mostOpen(path?: string): number;
  /** Drops every request held, as a receiver that crashed would (each of those attempts fails at once); resolves once they are closed. */
  release(): Promise<void>;
  close(): Promise<void>;
}

/** A receiver on 127.0.0.1 that accepts every request and never answers: an attempt ends only when the sender gives up (or at release). */
export async function startTarpit(): Promise<Tarpit> {
  const received: string[] = [];
  const held = new Set<ServerResponse>();
  const openNow = new Map<string, number>();
  const most = new Map<string, number>();
  const ALL = '';
  const count = (path: string, by: number) => {
    for (const key of [ALL, path]) {
      const n = (openNow.get(key) ?? 0) + by;
      openNow.set(key, n);
      most.set(key, Math.max(most.get(key) ?? 0, n));
    }
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '';
    received.push(path);
    count(path, 1);
    held.add(res);
    // A response closes when its connection does: the sender gave up, or release dropped it.
    res.on('close', () => {
      held.delete(res);
      count(path, -1);
    });
    req.resume();
  });
  const { port, close } = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    open: (path = ALL) => openNow.get(path) ?? 0,
    mostOpen: (path = ALL) => most.get(path) ?? 0,
    async release() {
      const dropped = [...held].map((res) => new Promise((resolve) => res.once('close', resolve)));
      for (const res of held) res.socket?.destroy();
      await Promise.all(dropped);
    },
    close,
  };
}

/** Listens on 127.0.0.1 at a port the system picks; `close` drops every open connection first. */
async function listenOnLoopback(server: Server): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
