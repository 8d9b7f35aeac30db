import { readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '../support/api.js';
import { fetchChecked, type FetchedResponse, type FetchInit } from '../support/fetch-checked.js';
import { makeMediaFiles, type MediaFiles } from '../support/media-files.js';
import { useDemoServer } from '../support/server.js';

// The real server over a real socket on 127.0.0.1: startup, migration, demo seed, and HTTP clients.
const running = useDemoServer({ maxUploadBytes: 1024 * 1024 });
let files: MediaFiles;

beforeAll(() => {
  files = makeMediaFiles();
});

afterAll(() => {
  files?.cleanup();
});

function call<T>(method: string, path: string, init: FetchInit = {}): Promise<FetchedResponse<T>> {
  return fetchChecked<T>(running.server.url, method, path, init);
}

describe('the server on a socket', () => {
  it("schedules the demo's sandbox post a minute ahead, and its own worker publishes it", async () => {
    const key = running.demo.key;
    const url = `/api/v1/posts/${running.demoPost.postId}`;
    const scheduled = await call<Schemas['PostDetail']>('GET', url, { key });
    expect(scheduled.body).toMatchObject({ status: 'scheduled', scheduledAt: running.demoPost.scheduledAt });
    expect(running.demoPost.curl).toContain(url);
    // Rather than wait the minute: publish it now, and the server's in-process worker takes it.
    expect((await call('POST', `${url}/publish`, { key })).status).toBe(202);
    let post = scheduled;
    for (const until = Date.now() + 20_000; post.body.status !== 'published' && Date.now() < until;) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      post = await call<Schemas['PostDetail']>('GET', url, { key });
    }
    expect(post.body.status).toBe('published');
    expect(post.body.targets.map((t) => [t.platform, t.status])).toEqual([
      ['x', 'published'],
      ['linkedin', 'published'],
    ]);
  });

  it('seeds the demo on first start, and its key works for every operation', async () => {
    const key = running.demo.key;
    const accounts = await call<Schemas['AccountList']>('GET', '/api/v1/accounts', { key });
    expect(accounts.status).toBe(200);
    expect(accounts.body.data.map((a) => a.platform)).toEqual(['x', 'instagram', 'linkedin']);
    const targets = accounts.body.data.filter((a) => a.platform !== 'instagram').map((a) => a.id);

    const form = new FormData();
    form.append('file', new Blob([files.jpeg1080x1350]), 'photo.jpg');
    form.append('altText', 'red');
    const uploaded = await call<Schemas['Media']>('POST', '/api/v1/media', { key, form });
    expect(uploaded.status).toBe(201);
    expect(uploaded.body.mime).toBe('image/jpeg');

    const created = await call<Schemas['PostCreateResult']>('POST', '/api/v1/posts', {
      key,
      json: { accountIds: targets, caption: 'Over a socket', mediaIds: [uploaded.body.id], scheduledAt: '2099-01-01T00:00:00Z' },
    });
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('scheduled');

    const listed = await call<Schemas['PostList']>('GET', '/api/v1/posts?limit=5', { key });
    expect(listed.body.data.map((p) => p.id)).toEqual([created.body.id, running.demoPost.postId]);
    expect((await call('DELETE', `/api/v1/posts/${created.body.id}`, { key })).status).toBe(200);
    expect((await call('GET', '/api/v1/posts', { key: 'hrld_nope' })).status).toBe(401);
  });

  it("answers what Node's parser refuses in the error shape: headers over 16 KiB (431) and a request that is not HTTP (400)", async () => {
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const { port } = new URL(running.server.url);
        const socket = connect(Number(port), '127.0.0.1', () => socket.end(request));
        let answer = '';
        socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
        socket.on('close', () => resolve(answer));
        socket.on('error', reject);
        socket.setTimeout(10_000, () => socket.destroy(new Error('no answer in 10 s')));
      });
    const huge = await raw(
      `GET /api/v1/posts HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${running.demo.key}\r\nX-Pad: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    const [head, body] = huge.split('\r\n\r\n');
    expect(head?.split('\r\n')[0]).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(head).toContain('Content-Type: application/json; charset=utf-8');
    expect(JSON.parse(body ?? '')).toEqual({ error: 'Request headers too large: at most 16 KiB in all', code: 'headers_too_large' });
    const garbage = await raw('NOT HTTP AT ALL\r\n\r\n');
    expect(garbage.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(garbage.split('\r\n\r\n')[1] ?? '')).toEqual({ error: 'Malformed HTTP request', code: 'malformed_request' });
  });

  it('keeps nothing from an upload whose client disconnects midway', async () => {
    const key = running.demo.key;
    const before = await call<Schemas['MediaList']>('GET', '/api/v1/media?limit=100', { key });
    const boundary = 'herald-abort';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`;
    const staging = join(running.dataDir, 'media', 'staging');
    const staged = () => {
      try {
        return readdirSync(staging);
      } catch {
        return [];
      }
    };
    const waitFor = async (done: () => boolean) => {
      const deadline = Date.now() + 5000;
      while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    };
    const { port } = new URL(running.server.url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    socket.write(
      `POST /api/v1/media HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 900000\r\n\r\n${head}`,
    );
    socket.write(files.jpeg1080x1350.subarray(0, 4000));
    // The partial file is being staged…
    await waitFor(() => staged().length === 1);
    expect(staged()).toHaveLength(1);
    socket.destroy();
    // …and is gone once the client has gone.
    await waitFor(() => staged().length === 0);
    expect(staged()).toEqual([]);
    const after = await call<Schemas['MediaList']>('GET', '/api/v1/media?limit=100', { key });
    expect(after.body.data).toHaveLength(before.body.data.length);
  });
});
