import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

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
  const sockets = new Set<Socket>();
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
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    answer(...next) {
      answers.push(...next);
    },
    async waitFor(n, timeoutMs = 15_000) {
      for (const end = Date.now() + timeoutMs; received.length < n; ) {
        if (Date.now() > end) throw new Error(`received ${received.length} webhook requests, expected ${n}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return [...received];
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
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
