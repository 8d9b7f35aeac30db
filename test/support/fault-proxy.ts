import { createServer, request as forward, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * What the proxy does to one request instead of passing it through:
 * - `answer`: replies itself; the server never sees the request;
 * - `commitThenAnswer`: the server handles the request (the write happens), the client gets this reply;
 * - `commitThenDestroy`: the server handles the request, the client's connection is cut before any reply;
 * - `commitThenHang`: the server handles the request, the client waits for a reply that never comes
 *   (until it gives up, or is killed: a worker dying mid-call);
 * - `delay`: the request waits until `until` settles, then passes through (a call in flight, held open).
 */
export type Fault =
  | ({ kind: 'answer' } & Answer)
  | ({ kind: 'commitThenAnswer' } & Answer)
  | { kind: 'commitThenDestroy' }
  | { kind: 'commitThenHang' }
  | { kind: 'delay'; until: Promise<void> };

export interface ProxiedRequest {
  method: string;
  /** The path without its query string, e.g. /xrpc/com.atproto.repo.putRecord. */
  path: string;
  /** The status the client saw; 0 when it got none (its connection cut, or left hanging). */
  status: number;
}

export interface FaultProxy {
  url: string;
  /** Decides per request; undefined passes it through. Replaces the previous plan. */
  plan(fault: (req: { method: string; path: string }) => Fault | undefined): void;
  /** Every request the proxy took, in order of completion. */
  requests: ProxiedRequest[];
  close(): Promise<void>;
}

/** An HTTP proxy on 127.0.0.1 in front of `target`, to make a server fail in ways it never would on its own. */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const upstream = new URL(target);
  let decide: (req: { method: string; path: string }) => Fault | undefined = () => undefined;
  const requests: ProxiedRequest[] = [];
  const sockets = new Set<Socket>();

  const reply = (res: ServerResponse, answer: Answer): void => {
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
    res.end(answer.body ?? '');
  };

  const server = createServer((req, res) => {
    const method = req.method ?? 'GET';
    const path = new URL(req.url ?? '/', 'http://proxy').pathname;
    const fault = decide({ method, path });
    const done = (status: number): void => {
      requests.push({ method, path, status });
    };
    if (fault?.kind === 'answer') {
      // Drain the body first so the client is not cut off mid-upload.
      req.resume();
      req.on('end', () => {
        reply(res, fault);
        done(fault.status);
      });
      return;
    }
    if (fault?.kind === 'delay') {
      req.pause();
      void fault.until.then(() => pass(req, res, method, undefined, done));
      return;
    }
    pass(req, res, method, fault, done);
  });

  const pass = (
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    fault: Exclude<Fault, { kind: 'answer' } | { kind: 'delay' }> | undefined,
    done: (status: number) => void,
  ): void => {
    const headers: IncomingHttpHeaders = { ...req.headers, host: upstream.host };
    const out = forward({ host: upstream.hostname, port: upstream.port, method, path: req.url, headers }, (upstreamRes: IncomingMessage) => {
      if (fault === undefined) {
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        upstreamRes.pipe(res);
        upstreamRes.on('end', () => done(upstreamRes.statusCode ?? 502));
        return;
      }
      // The server has answered, so the write is done; only then does the fault hit the client.
      upstreamRes.resume();
      upstreamRes.on('end', () => {
        if (fault.kind === 'commitThenDestroy') {
          req.socket.destroy();
          done(0);
        } else if (fault.kind === 'commitThenHang') {
          done(0);
        } else {
          reply(res, fault);
          done(fault.status);
        }
      });
    });
    out.on('error', () => {
      reply(res, { status: 502, body: '{"error":"UpstreamUnreachable"}' });
      done(502);
    });
    req.pipe(out);
  };
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    plan(fault) {
      decide = fault;
    },
    requests,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
