import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertUrlAllowed, createGuardedFetch, UrlNotAllowedError } from '../../src/adapters/net/guarded-fetch.js';

/** A plain HTTP server on 127.0.0.1 that counts every TCP connection made to it, TLS attempts included. */
interface RecordingServer {
  port: number;
  url: string;
  connections: number;
  requests: { method: string; path: string; headers: IncomingMessage['headers']; body: string }[];
  server: Server;
}

async function startRecordingServer(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<RecordingServer> {
  const recording = { connections: 0, requests: [] } as unknown as RecordingServer;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      recording.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
      answer(req, res);
    });
  });
  server.on('connection', () => recording.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  recording.server = server;
  recording.port = address.port;
  recording.url = `http://127.0.0.1:${address.port}`;
  return recording;
}

async function stop(recording: RecordingServer | undefined): Promise<void> {
  if (recording === undefined) return;
  recording.server.closeAllConnections();
  await new Promise((r) => recording.server.close(r));
}

async function refusal(promise: Promise<unknown>): Promise<UrlNotAllowedError> {
  const error = await promise.then(
    () => {
      throw new Error('the request was not refused');
    },
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(UrlNotAllowedError);
  expect((error as Error).name).toBe('UrlNotAllowedError');
  return error as UrlNotAllowedError;
}

let target: RecordingServer;
let redirectTarget: RecordingServer;
let redirecting: RecordingServer;
let silent: RecordingServer;

beforeAll(async () => {
  target = await startRecordingServer((req, res) => {
    res.setHeader('content-type', 'text/plain');
    res.end(`hello ${req.method}`);
  });
  redirectTarget = await startRecordingServer((_req, res) => res.end('followed'));
  redirecting = await startRecordingServer((_req, res) => {
    res.writeHead(302, { location: `${redirectTarget.url}/landing` });
    res.end();
  });
  // Accepts the request and never answers.
  silent = await startRecordingServer(() => {});
});

afterAll(async () => {
  for (const s of [target, redirectTarget, redirecting, silent]) await stop(s);
});

describe('the guarded fetch by default (public https only)', () => {
  const guardedFetch = createGuardedFetch({ allowPrivateNetwork: false });

  it('refuses http, saying what setting would allow it', async () => {
    const error = await refusal(guardedFetch(`${target.url}/`));
    expect(error.message).toBe(
      'URL not allowed: http is refused; only https to public addresses (set HERALD_ALLOW_PRIVATE_NETWORK=true for a private network)',
    );
    expect(target.connections).toBe(0);
  });

  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['[::1]', 'a loopback address'],
    ['[::ffff:127.0.0.1]', 'a loopback address'],
    ['[::ffff:7f00:1]', 'a loopback address'],
    ['2130706433', 'a loopback address'],
    ['10.0.0.5', 'a private address'],
    ['192.168.1.1', 'a private address'],
    ['169.254.169.254', 'a link-local address'],
    ['[fd00::1]', 'a private (unique local) address'],
    ['0.0.0.0', 'a reserved address (unspecified)'],
  ])('refuses https to %s (%s) without connecting', async (host, kind) => {
    const before = target.connections;
    const error = await refusal(guardedFetch(`https://${host}:${target.port}/`));
    expect(error.message).toContain(`is ${kind}; only public addresses are allowed (set HERALD_ALLOW_PRIVATE_NETWORK=true for a private network)`);
    expect(target.connections).toBe(before);
  });

  it('names the address itself, not the URL', async () => {
    const error = await refusal(guardedFetch('https://10.0.0.5/path?token=abc'));
    expect(error.message).toMatch(/^URL not allowed: 10\.0\.0\.5 is a private address/);
    expect(error.message).not.toContain('token');
  });

  it('refuses a name that resolves to a loopback address, at connect time', async () => {
    expect(() => assertUrlAllowed(`https://localhost:${target.port}/`, false)).not.toThrow();
    const error = await refusal(guardedFetch(`https://localhost:${target.port}/`));
    // What the name resolved to is not told: it would map a private network for a tenant.
    expect(error.message).toMatch(/^URL not allowed: localhost is not allowed; only public addresses/);
    expect(error.message).not.toMatch(/127\.0\.0\.1|::1|loopback/);
    expect(target.connections).toBe(0);
  });

  it.each(['[::127.0.0.1]', '[::7f00:1]', '[::a00:5]'])('refuses the IPv4-compatible IPv6 address %s before connecting', (host) => {
    expect(() => assertUrlAllowed(`https://${host}/`, false)).toThrow(/^URL not allowed: ::[0-9a-f:]+ is an IPv4-compatible IPv6 address \(deprecated\)/);
    expect(() => assertUrlAllowed(`http://${host}/`, true)).toThrow(UrlNotAllowedError);
  });

  it('lets a public https address through the synchronous check', () => {
    expect(() => assertUrlAllowed('https://93.184.215.14/', false)).not.toThrow();
    expect(() => assertUrlAllowed('https://[2606:4700::6810:85e5]/', false)).not.toThrow();
    expect(() => assertUrlAllowed('https://bsky.social/xrpc', false)).not.toThrow();
  });
});

describe('the guarded fetch with allowPrivateNetwork', () => {
  const guardedFetch = createGuardedFetch({ allowPrivateNetwork: true, timeoutMs: 2000 });

  it('reaches a plain http server on 127.0.0.1 and on localhost', async () => {
    const byAddress = await guardedFetch(`${target.url}/a`);
    expect(byAddress.status).toBe(200);
    expect(await byAddress.text()).toBe('hello GET');
    const byName = await guardedFetch(`http://localhost:${target.port}/b`, { method: 'POST', body: 'x' });
    expect(await byName.text()).toBe('hello POST');
    expect(target.requests.map((r) => r.path)).toEqual(['/a', '/b']);
  });

  it('returns a redirect as it is and never follows it', async () => {
    const response = await guardedFetch(`${redirecting.url}/start`);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe(`${redirectTarget.url}/landing`);
    expect(redirecting.requests).toHaveLength(1);
    expect(redirectTarget.connections).toBe(0);
  });

  it('still refuses a reserved address', async () => {
    const error = await refusal(guardedFetch(`http://0.0.0.0:${target.port}/`));
    expect(error.message).toBe('URL not allowed: 0.0.0.0 is a reserved address (unspecified); only public and private-network addresses are allowed');
  });

  it('sends a global FormData as multipart, fields and files', async () => {
    const form = new FormData();
    form.append('description', 'a red square');
    form.append('file', new Blob(['PNGDATA'], { type: 'image/png' }), 'square.png');
    await guardedFetch(`${target.url}/upload`, { method: 'POST', body: form });
    const sent = target.requests.at(-1);
    expect(sent?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(sent?.body).toContain('a red square');
    expect(sent?.body).toContain('filename="square.png"');
    expect(sent?.body).toContain('PNGDATA');
  });

  it('takes a global Request, with its method, headers and body', async () => {
    const request = new Request(`${target.url}/request`, { method: 'PUT', headers: { 'x-herald': 'yes' }, body: 'payload' });
    const response = await guardedFetch(request);
    expect(await response.text()).toBe('hello PUT');
    const sent = target.requests.at(-1);
    expect(sent).toMatchObject({ method: 'PUT', path: '/request', body: 'payload' });
    expect(sent?.headers['x-herald']).toBe('yes');
  });

  it('gives up on a server that does not answer within timeoutMs', async () => {
    const quick = createGuardedFetch({ allowPrivateNetwork: true, timeoutMs: 300 });
    await expect(quick(`${silent.url}/`)).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(silent.requests).toHaveLength(1);
  });
});

describe('in both modes', () => {
  it.each([false, true])('refuses ftp: and file: URLs (allowPrivateNetwork %s)', async (allowPrivateNetwork) => {
    const guardedFetch = createGuardedFetch({ allowPrivateNetwork });
    const only = allowPrivateNetwork ? 'https and http' : 'https';
    expect((await refusal(guardedFetch(`ftp://127.0.0.1:${target.port}/`))).message).toBe(`URL not allowed: ftp is refused; only ${only} URLs are allowed`);
    expect((await refusal(guardedFetch('file:///etc/passwd'))).message).toBe(`URL not allowed: file is refused; only ${only} URLs are allowed`);
    expect(() => assertUrlAllowed('javascript:alert(1)', allowPrivateNetwork)).toThrow(UrlNotAllowedError);
  });

  it.each([false, true])('refuses credentials in the URL without sending them (allowPrivateNetwork %s)', async (allowPrivateNetwork) => {
    const guardedFetch = createGuardedFetch({ allowPrivateNetwork });
    const before = target.connections;
    const scheme = allowPrivateNetwork ? 'http' : 'https';
    const error = await refusal(guardedFetch(`${scheme}://alice:hunter2@127.0.0.1:${target.port}/`));
    expect(error.message).toBe('URL not allowed: credentials in the URL (user:password@) are refused');
    await refusal(guardedFetch(`${scheme}://alice@example.com/`));
    expect(target.connections).toBe(before);
  });

  it('refuses what is not an absolute URL', () => {
    expect(() => assertUrlAllowed('/relative/path', true)).toThrow('URL not allowed: it is not a valid absolute URL');
  });
});
