import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ffmpeg from '@ffmpeg-installer/ffmpeg';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { ServiceState } from '../../src/api/service-state.js';
import { readEnvironment } from '../../src/cli/wiring/configuration.js';
import { publicMediaUrl } from '../../src/domain/media/public-media.js';
import type { MediaStorage } from '../../src/domain/ports/media-storage.js';
import { keepHouse } from '../../src/worker/housekeeping.js';
import { drain } from '../../src/worker/worker.js';
import { injectChecked, UNLIMITED, useTestApi, type ApiRequest, type Schemas, type TestApi } from '../support/api.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { userWithKey, type TestUser } from '../support/fixtures.js';
import { startMastodonFake, type MastodonFake } from '../support/mastodon-fake.js';
import { makeMediaFiles, multipartBody, type MediaFiles } from '../support/media-files.js';
import { unusedPort } from '../support/ports.js';
import { postDetail, publishNow, uploadMedia } from '../support/posts.js';
import { runLogger } from '../support/run-log.js';
import { startS3Fake, type S3Fake } from '../support/s3-fake.js';

// Media in a bucket of an S3-compatible store (s3rver, a fake on 127.0.0.1), reached through a
// fault proxy: uploads, reads, deletes and publications go to the bucket, and a store that cannot
// be reached or fails mid-upload is a 503 that keeps nothing, here or there.
const api = useTestApi();
let s3: S3Fake;
let faults: FaultProxy;
let files: MediaFiles;
let mastodon: MastodonFake;
let stagingRoot: string;
/** The API and its workers' dependencies on the bucket, through the proxy. */
let onS3: TestApi;
/** The same on a store nobody answers at (a closed port). */
let onClosedPort: TestApi;
let storage: MediaStorage;
let deadStorage: MediaStorage;
const apps: FastifyInstance[] = [];
const PREFIX = 'herald';
// Large enough for two 8 MiB parts: random pixels do not compress.
const BIG_PNG_BYTES = 8 * 1024 * 1024;

/** The test API, answering through an app whose media storage is `storage`. */
async function apiOn(storage: MediaStorage): Promise<TestApi> {
  const state = new ServiceState();
  state.attach({ ...api.publishing.serviceDeps, storage, maxUploadBytes: 4 * BIG_PNG_BYTES }, api.state.apiKeyCache());
  const app = await buildApp({ context: state, rateLimits: { limits: UNLIMITED }, loggerInstance: runLogger() });
  apps.push(app);
  return { ...api, app, request: <T>(req: ApiRequest) => injectChecked<T>(app, req) };
}

beforeAll(async () => {
  files = makeMediaFiles();
  [s3, mastodon, stagingRoot] = await Promise.all([startS3Fake(), startMastodonFake(), mkdtemp(join(tmpdir(), 'herald-s3-staging-'))]);
  faults = await startFaultProxy(s3.url);
  storage = await s3.storage(stagingRoot, PREFIX, faults.url);
  onS3 = await apiOn(storage);
  deadStorage = await s3.storage(stagingRoot, PREFIX, `http://127.0.0.1:${await unusedPort()}`);
  onClosedPort = await apiOn(deadStorage);
});
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
  await faults?.close();
  await s3?.close();
  await mastodon?.close();
  files?.cleanup();
  await rm(stagingRoot, { recursive: true, force: true });
});

const objectKey = (u: TestUser, mediaId: string) => `${PREFIX}/${u.userId}/${mediaId}`;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const staged = () => readdir(join(stagingRoot, 'staging')).catch(() => []);
const mediaRows = async (u: TestUser) => (await api.db.selectFrom('media_assets').select('id').where('owner_user_id', '=', u.userId).execute()).length;

function upload(on: TestApi, u: TestUser, file: Buffer) {
  const { payload, contentType } = multipartBody([{ name: 'file', value: file, filename: 'f', type: 'image/png' }]);
  return on.request<Schemas['Media'] | Schemas['Error']>({
    method: 'POST',
    url: '/api/v1/media',
    key: u.key,
    payload,
    headers: { 'content-type': contentType },
  });
}

/** A signed public URL's path and query, checked against the spec once, then read raw (the checked body is text). */
async function readPublic(on: TestApi, mediaId: string, headers: Record<string, string> = {}) {
  const url = new URL(publicMediaUrl(api.publishing.serviceDeps.publicMedia, mediaId, new Date(Date.now() + 3_600_000)));
  const checked = await on.request({ method: 'GET', url: `${url.pathname}${url.search}`, headers });
  const raw = await on.app.inject({ method: 'GET', url: `${url.pathname}${url.search}`, headers });
  return { checked, raw };
}

describe('media in an S3 bucket', () => {
  it('stores an upload in the bucket, serves it whole and by range from there, and deletes it there', async () => {
    const u = await userWithKey(api.db);
    const id = await uploadMedia(onS3, u, files.png64, 'a.png', 'image/png', 'A blue square');
    expect(await s3.object(objectKey(u, id))).toEqual({ bytes: files.png64, sha256: sha256(files.png64) });
    expect(await staged()).toEqual([]);

    const whole = await readPublic(onS3, id);
    expect([whole.raw.statusCode, whole.raw.headers['content-type'], whole.raw.rawPayload.equals(files.png64)]).toEqual([200, 'image/png', true]);
    // HEAD is answered from the medium's row: the bucket is not asked for the object at all.
    const objectRequests = () => faults.requests.filter((r) => r.path.endsWith(`/${objectKey(u, id)}`)).length;
    const before = objectRequests();
    const url = new URL(publicMediaUrl(api.publishing.serviceDeps.publicMedia, id, new Date(Date.now() + 3_600_000)));
    const head = await onS3.app.inject({ method: 'HEAD', url: `${url.pathname}${url.search}` });
    expect([head.statusCode, head.headers['content-type'], Number(head.headers['content-length']), head.rawPayload.length]).toEqual([
      200,
      'image/png',
      files.png64.length,
      0,
    ]);
    expect(objectRequests()).toBe(before);
    const range = await readPublic(onS3, id, { range: 'bytes=8-23' });
    expect([range.raw.statusCode, range.raw.headers['content-range']]).toEqual([206, `bytes 8-23/${files.png64.length}`]);
    expect(range.raw.rawPayload.equals(files.png64.subarray(8, 24))).toBe(true);

    expect((await onS3.request({ method: 'DELETE', url: `/api/v1/media/${id}`, key: u.key })).status).toBe(200);
    expect(await s3.object(objectKey(u, id))).toBeUndefined();
  });

  it('publishes media read from the bucket, and retries, not fails, a publication whose media the store cannot give', async () => {
    const u = await userWithKey(api.db);
    const who = mastodon.addAccount('sam');
    const credentials = { instance: mastodon.url, accessToken: who.token };
    const connected = await onS3.request<Schemas['Account']>({
      method: 'POST',
      url: '/api/v1/accounts',
      key: u.key,
      body: { platform: 'mastodon', credentials },
    });
    expect(connected.status).toBe(201);
    const media = await uploadMedia(onS3, u, files.png64, 'a.png', 'image/png', 'From the bucket');
    const post = await publishNow(onS3, u, { accountIds: [connected.body.id], caption: 'Stored elsewhere', mediaIds: [media] });

    await drain({ ...api.publishing.deps, storage: deadStorage }, 1);
    expect((await postDetail(onS3, u, post)).targets[0]).toMatchObject({
      status: 'failed',
      error: { category: 'system_error', retrying: true, message: `Media ${media} could not be read from storage` },
    });
    expect(mastodon.statuses.filter((s) => s.accountId === who.id)).toEqual([]);

    // The retry comes due (its backoff is at most two minutes here) and reads the file from the bucket.
    await drain({ ...api.publishing.deps, storage, now: () => new Date(Date.now() + 10 * 60_000) }, 1);
    const [status] = mastodon.statuses.filter((s) => s.accountId === who.id);
    expect(mastodon.media.get(status?.mediaIds[0] ?? '')?.bytes).toEqual(files.png64);
    expect((await postDetail(onS3, u, post)).targets[0]).toMatchObject({ status: 'published', platformPostId: status?.id });
  });

  it('answers 503 with Retry-After when the store cannot be reached, keeping no media and nothing staged', async () => {
    const u = await userWithKey(api.db);
    const refused = await upload(onClosedPort, u, files.png64);
    expect([refused.status, refused.headers['retry-after'], refused.body]).toEqual([
      503,
      '5',
      { error: 'Media storage not available: the object store did not answer (ECONNREFUSED)', code: 'storage_unavailable' },
    ]);
    expect(await mediaRows(u)).toBe(0);
    expect(await staged()).toEqual([]);

    const id = await uploadMedia(onS3, u, files.png64, 'a.png', 'image/png', 'Kept');
    const unreadable = await readPublic(onClosedPort, id);
    expect([unreadable.checked.status, unreadable.checked.headers['retry-after'], (unreadable.checked.body as Schemas['Error']).code]).toEqual([
      503,
      '5',
      'storage_unavailable',
    ]);
  });

  it('leaves no object, no media, nothing staged and no multipart upload when the store fails in the middle of an upload', async () => {
    const u = await userWithKey(api.db);
    const big = await noisePng();
    expect(big.length).toBeGreaterThan(BIG_PNG_BYTES);
    // The first part reaches the bucket; every later one (and its retries) is stored there but its answer is cut off.
    let parts = 0;
    faults.plan(({ method }) => (method === 'PUT' && ++parts > 1 ? { kind: 'commitThenDestroy' } : undefined));
    const before = faults.requests.length;
    try {
      const cut = await upload(onS3, u, big);
      expect([cut.status, cut.headers['retry-after'], (cut.body as Schemas['Error']).code]).toEqual([503, '5', 'storage_unavailable']);
    } finally {
      faults.plan(() => undefined);
    }
    // The multipart upload was begun, then aborted.
    const calls = faults.requests.slice(before).map((r) => `${r.method} ${r.status}`);
    expect(calls).toEqual(expect.arrayContaining(['POST 200', 'PUT 200', 'PUT 0', 'DELETE 204']));
    expect(await s3.incompleteUploads()).toEqual([]);
    expect((await s3.keys()).filter((key) => key.startsWith(`${PREFIX}/${u.userId}/`))).toEqual([]);
    expect(await mediaRows(u)).toBe(0);
    expect(await staged()).toEqual([]);

    // With the store whole again, the same file goes up in two parts.
    const stored = await upload(onS3, u, big);
    expect(stored.status).toBe(201);
    expect((await s3.object(objectKey(u, (stored.body as Schemas['Media']).id)))?.bytes.equals(big)).toBe(true);
    expect(await s3.incompleteUploads()).toEqual([]);
  });

  it('removes, an hour after it was written, a file no medium names (its delete found the store down), keeping the media and objects not Herald’s', async () => {
    const u = await userWithKey(api.db);
    const kept = await uploadMedia(onS3, u, files.png64, 'kept.png', 'image/png', 'Kept');
    const lost = await uploadMedia(onS3, u, files.png64, 'lost.png', 'image/png', 'Lost');
    const deleted = await onClosedPort.request({ method: 'DELETE', url: `/api/v1/media/${lost}`, key: u.key });
    expect([deleted.status, deleted.headers['retry-after']]).toEqual([503, expect.any(String)]);
    expect(await s3.object(objectKey(u, lost))).toBeDefined();
    const notHeralds = [`${PREFIX}/notes.txt`, `elsewhere/${u.userId}/${lost}`];
    for (const key of notHeralds) await s3.put(key, Buffer.from('not Herald’s'));

    const houseKeptAt = (ms: number) => keepHouse({ ...api.publishing.deps, storage, now: () => new Date(Date.now() + ms) });
    // Within the hour an upload may still be naming its file: nothing goes.
    expect(await houseKeptAt(30 * 60_000)).toBe(true);
    expect(await s3.object(objectKey(u, lost))).toBeDefined();
    expect(await houseKeptAt(2 * 3_600_000)).toBe(true);
    expect(await s3.object(objectKey(u, lost))).toBeUndefined();
    expect((await s3.keys()).sort()).toEqual(expect.arrayContaining([objectKey(u, kept), ...notHeralds]));
    const served = await readPublic(onS3, kept);
    expect(served.raw.rawPayload.equals(files.png64)).toBe(true);

    // Listed in key order, Herald's keys only, going on after a key as a next run does.
    const listed = async (after?: string) => {
      const keys: string[] = [];
      for await (const page of storage.storedAfter(after)) keys.push(...page.map((file) => file.key));
      return keys;
    };
    const all = await listed();
    expect(all).toEqual([...all].sort());
    expect(all).toContain(`${u.userId}/${kept}`);
    expect(all.some((key) => key.includes('notes.txt') || key.startsWith('elsewhere'))).toBe(false);
    expect(await listed(`${u.userId}/${kept}`)).toEqual(all.filter((key) => key > `${u.userId}/${kept}`));
  });

  it('takes HERALD_MEDIA_URL as s3://bucket[/prefix], and refuses anything else at start', () => {
    expect(readEnvironment({}).mediaStore).toBeUndefined();
    expect(readEnvironment({ HERALD_MEDIA_URL: 's3://media.example/herald/prod/' }).mediaStore).toEqual({ bucket: 'media.example', prefix: 'herald/prod' });
    expect(readEnvironment({ HERALD_MEDIA_URL: 's3://media', HERALD_S3_FORCE_PATH_STYLE: 'true' })).toMatchObject({
      mediaStore: { bucket: 'media', prefix: '' },
      s3ForcePathStyle: true,
    });
    for (const url of ['https://media.example/herald', 's3://Media', 's3://media/a//b', 's3://media/../b', '/var/media']) {
      expect(() => readEnvironment({ HERALD_MEDIA_URL: url })).toThrow(
        `HERALD_MEDIA_URL must be s3://bucket or s3://bucket/prefix (unset: the data folder), got ${url}`,
      );
    }
  });
});

/** A PNG of random pixels over 8 MiB, made with the ffmpeg npm installed. */
async function noisePng(): Promise<Buffer> {
  const out = join(stagingRoot, 'noise.png');
  const noise = "nullsrc=s=1800x1800,format=rgb24,geq=r='random(1)*255':g='random(2)*255':b='random(3)*255'";
  execFileSync(ffmpeg.path, ['-v', 'error', '-y', '-f', 'lavfi', '-i', noise, '-frames:v', '1', out], { timeout: 60_000 });
  try {
    return await readFile(out);
  } finally {
    await rm(out, { force: true });
  }
}
