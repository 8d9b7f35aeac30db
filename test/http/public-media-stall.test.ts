import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { ServiceState } from '../../src/api/service-state.js';
import { S3Storage } from '../../src/adapters/storage/s3-storage.js';
import { publicMediaUrl } from '../../src/domain/media/public-media.js';
import { injectChecked, UNLIMITED, useTestApi, type Schemas } from '../support/api.js';
import { userWithKey } from '../support/fixtures.js';
import { multipartBody } from '../support/media-files.js';
import { solidPng } from '../support/png.js';
import { runLogger } from '../support/run-log.js';
import { startS3Fake, type S3Fake } from '../support/s3-fake.js';

// Readers of a public media URL that never read must not take the store's sockets from uploads (issue 38, item 8):
// public reads have their own pool, and a reader that takes nothing for the stall bound is cut.
const api = useTestApi();
const PREFIX = 'herald';
const STALL_MS = 1_500;
// Far more than the loopback's socket buffers hold: a reader that does not read keeps the store's answer unfinished.
const LARGE_BYTES = 64 * 1024 * 1024;
let s3: S3Fake;
let stagingRoot: string;
let app: FastifyInstance;
let port: number;

beforeAll(async () => {
  [s3, stagingRoot] = await Promise.all([startS3Fake(), mkdtemp(join(tmpdir(), 'herald-stall-'))]);
  const storage = await S3Storage.create({
    location: { bucket: s3.bucket, prefix: PREFIX },
    stagingRoot,
    client: {
      endpoint: s3.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      forcePathStyle: true,
      // Two sockets for uploads: on one shared pool, three stalled readers would leave an upload none.
      requestHandler: { connectionTimeout: 3_000, requestTimeout: 20_000, httpAgent: { maxSockets: 2 } },
    },
  });
  const state = new ServiceState();
  const deps = api.publishing.serviceDeps;
  state.attach({ ...deps, storage, publicMedia: { ...deps.publicMedia, stallMs: STALL_MS } }, api.state.apiKeyCache());
  app = await buildApp({ context: state, rateLimits: { limits: UNLIMITED }, loggerInstance: runLogger() });
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await app?.close();
  await s3?.close();
  await rm(stagingRoot, { recursive: true, force: true });
});

async function upload(key: string): Promise<{ status: number; id: string }> {
  const { payload, contentType } = multipartBody([{ name: 'file', value: solidPng(8, 8, [1, 2, 3]), filename: 'a.png', type: 'image/png' }]);
  const res = await injectChecked<Schemas['Media']>(app, { method: 'POST', url: '/api/v1/media', key, payload, headers: { 'content-type': contentType } });
  return { status: res.status, id: res.body.id };
}

/** A client that asks for `path` on a raw socket and does not read the answer until it is resumed; `received` resolves to the bytes it got once Herald closed it. */
function stalledReader(path: string): { socket: Socket; received: Promise<number> } {
  const socket = connect({ host: '127.0.0.1', port });
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  socket.pause();
  let bytes = 0;
  socket.on('data', (chunk: Buffer) => (bytes += chunk.length));
  socket.on('error', () => {});
  const received = new Promise<number>((resolve) => socket.once('close', () => resolve(bytes)));
  return { socket, received };
}

describe('public media readers that do not read', () => {
  it('leave other tenants’ uploads their sockets, and are cut after the stall bound', { timeout: 30_000 }, async () => {
    const owner = await userWithKey(api.db);
    const { id } = await upload(owner.key);
    // The medium made large in place: an object written as another program would, and its row to match.
    await s3.put(`${PREFIX}/${owner.userId}/${id}`, randomBytes(LARGE_BYTES));
    await api.db.updateTable('media_assets').set({ bytes: LARGE_BYTES }).where('id', '=', id).execute();
    const url = new URL(publicMediaUrl(api.publishing.serviceDeps.publicMedia, id, new Date(Date.now() + 3_600_000)));

    const readers = [1, 2, 3].map(() => stalledReader(`${url.pathname}${url.search}`));
    try {
      // Give the readers time to take the store's sockets, then another tenant uploads while they hang.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const other = await userWithKey(api.db);
      const deadline = new Promise((resolve) => setTimeout(() => resolve('no answer within 5 s'), 5_000));
      const answered = await Promise.race([upload(other.key).then((r) => r.status), deadline]);
      expect(answered).toBe(201);

      // Past the stall bound Herald has cut them: read on, each gets the part that was sent and the end, never the whole file.
      await new Promise((resolve) => setTimeout(resolve, STALL_MS + 500));
      for (const r of readers) r.socket.resume();
      for (const bytes of await Promise.all(readers.map((r) => r.received))) expect(bytes).toBeLessThan(LARGE_BYTES);
    } finally {
      for (const r of readers) r.socket.destroy();
    }
  });
});
