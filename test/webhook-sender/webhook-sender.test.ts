import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret } from '../../src/domain/webhooks/secrets.js';
import { createGuardedFetch } from '../../src/adapters/net/guarded-fetch.js';
import { createWebhookSender } from '../../src/adapters/webhooks/webhook-sender.js';
import type { WebhookRequest, WebhookResponse } from '../../src/domain/ports/webhook-sender.js';
import { unusedPort } from '../support/ports.js';
import { useTestReceiver, verifiedWith } from '../support/webhook-receiver.js';

const local = createGuardedFetch({ allowPrivateNetwork: true });
const secret = newWebhookSecret();
const receiver = useTestReceiver();

function request(url: string, fields: Partial<WebhookRequest> = {}): WebhookRequest {
  const body = JSON.stringify({ id: 'evt_1', type: 'ping', timestamp: '2026-11-21T10:00:00.000Z', data: { webhookId: 'whk_1', message: 'héllo ✓' } });
  return { url, eventId: 'evt_1', timestamp: new Date(), body, secrets: [secret], ...fields };
}

/** Whatever the sender answered, no secret is in it. */
function expectNoSecret(response: WebhookResponse, ...secrets: string[]): void {
  for (const s of secrets) expect(JSON.stringify(response)).not.toContain(s.slice('whsec_'.length));
}

/** A server for the answers the test receiver cannot give (a redirect, a body that never ends). */
async function startServer(handler: Parameters<typeof createServer>[1]): Promise<{ url: string; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    hits.push(req.url ?? '');
    handler?.(req, res);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    hits,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('the webhook sender', () => {
  it('posts the body byte for byte with the Standard Webhooks headers, signed with the secret', async () => {
    const sender = createWebhookSender({ fetch: local, timeoutMs: 5_000 });
    const sent = request(receiver.url, { timestamp: new Date('2026-11-21T10:00:07.900Z') });
    const from = receiver.received.length;
    // A timestamp this old fails a receiver's tolerance, so the signature is checked on a fresh one below.
    const response = await sender.send(sent);
    expect(response).toMatchObject({ statusCode: 204, error: null, excerpt: null });
    expect(Number.isInteger(response.latencyMs) && response.latencyMs >= 0).toBe(true);
    const got = receiver.received[from];
    expect(got?.body).toBe(sent.body);
    expect(got?.headers).toMatchObject({ 'content-type': 'application/json', 'webhook-id': 'evt_1', 'webhook-timestamp': '1795255207' });
    expect(got?.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);

    await sender.send(request(receiver.url));
    const fresh = receiver.received[from + 1];
    expect(fresh && verifiedWith(fresh, secret)).toBe(true);
    expect(fresh && verifiedWith(fresh, newWebhookSecret())).toBe(false);
    expectNoSecret(response, secret);
  });

  it('signs once per secret during a rotation, each signature verifying with its own secret', async () => {
    const sender = createWebhookSender({ fetch: local, timeoutMs: 5_000 });
    const previous = newWebhookSecret();
    const from = receiver.received.length;
    receiver.answer({ status: 200, body: 'ok' });
    const response = await sender.send(request(receiver.url, { secrets: [secret, previous] }));
    expect(response).toMatchObject({ statusCode: 200, error: null, excerpt: 'ok' });
    const got = receiver.received[from];
    expect(got?.headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(got && verifiedWith(got, secret)).toBe(true);
    expect(got && verifiedWith(got, previous)).toBe(true);
  });

  it('reports a non-2xx answer with its status and only the first 256 characters of its body', async () => {
    const sender = createWebhookSender({ fetch: local, timeoutMs: 5_000 });
    receiver.answer({ status: 500, body: 'e'.repeat(10_000) });
    const response = await sender.send(request(receiver.url));
    expect(response).toMatchObject({ statusCode: 500, error: 'The endpoint answered 500', excerpt: 'e'.repeat(256) });
    expectNoSecret(response, secret);
  });

  it('does not follow a redirect', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/hooks') res.writeHead(301, { location: '/elsewhere' }).end();
      else res.writeHead(204).end();
    });
    try {
      const response = await createWebhookSender({ fetch: local, timeoutMs: 5_000 }).send(request(server.url));
      expect(response).toMatchObject({ statusCode: 301, error: 'The endpoint answered 301 (redirects are not followed)' });
      expect(server.hits).toEqual(['/hooks']);
    } finally {
      await server.close();
    }
  });

  it('gives up on a receiver that never answers after its timeout', async () => {
    receiver.answer({ hang: true });
    const response = await createWebhookSender({ fetch: local, timeoutMs: 300 }).send(request(receiver.url));
    expect(response).toMatchObject({ statusCode: null, error: 'No answer within 300 ms', excerpt: null });
    expect(response.latencyMs).toBeGreaterThanOrEqual(290);
  });

  it('is bounded by its timeout when a receiver answers and then trickles its body forever', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('a');
      const timer = setInterval(() => res.write('a'), 100);
      res.on('close', () => clearInterval(timer));
    });
    try {
      const response = await createWebhookSender({ fetch: local, timeoutMs: 500 }).send(request(server.url));
      expect(response.statusCode).toBe(200);
      expect(response.error).toBeNull();
      expect(response.excerpt).toMatch(/^a+$/);
    } finally {
      await server.close();
    }
  });

  it('names the host and the cause when nothing listens', async () => {
    const port = await unusedPort();
    const response = await createWebhookSender({ fetch: local, timeoutMs: 5_000 }).send(request(`http://127.0.0.1:${port}/hooks?token=not-in-messages`));
    expect(response.statusCode).toBeNull();
    expect(response.error).toBe(`127.0.0.1:${port} did not answer (ECONNREFUSED)`);
  });

  it('sends nothing to a loopback address unless private networks are allowed', async () => {
    const from = receiver.received.length;
    const guarded = createWebhookSender({ fetch: createGuardedFetch({ allowPrivateNetwork: false }), timeoutMs: 5_000 });
    const response = await guarded.send(request(receiver.url));
    expect(response.statusCode).toBeNull();
    expect(response.error).toMatch(/^URL not allowed: /);
    expect(receiver.received.length).toBe(from);
  });
});
