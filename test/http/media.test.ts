import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import ffmpeg from '@ffmpeg-installer/ffmpeg';
import ffprobe from '@ffprobe-installer/ffprobe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { ServiceState } from '../../src/api/service-state.js';
import { FfprobeMediaProbe, type ProbeTools } from '../../src/adapters/probe/ffprobe-media-probe.js';
import { keepHouse } from '../../src/worker/housekeeping.js';
import { LocalDiskStorage } from '../../src/adapters/storage/local-disk-storage.js';
import { removeOrphanFiles } from '../../src/domain/media/abandoned-uploads.js';
import { injectChecked, UNLIMITED, useTestApi, type ApiResponse, type InvalidRequest, type Schemas } from '../support/api.js';
import { createTestDatabase } from '../support/database.js';
import { unstorableTextDetail } from '../support/details.js';
import { account, inOneHour, userWithKey } from '../support/fixtures.js';
import { stringMatching } from '../support/matchers.js';
import { makeMediaFiles, multipartBody, type MediaFiles } from '../support/media-files.js';
import { runLogger } from '../support/run-log.js';
import { startTestServer } from '../support/server.js';

const api = useTestApi();
let files: MediaFiles;
beforeAll(() => {
  files = makeMediaFiles();
});
afterAll(() => files?.cleanup());

function upload<T = Schemas['Media']>(key: string, parts: Parameters<typeof multipartBody>[0]): Promise<ApiResponse<T>> {
  const { payload, contentType } = multipartBody(parts);
  return api.request<T>({ method: 'POST', url: '/api/v1/media', key, payload, headers: { 'content-type': contentType } });
}

async function mediaCount(userId: string): Promise<number> {
  return (await api.db.selectFrom('media_assets').select('id').where('owner_user_id', '=', userId).execute()).length;
}

describe('POST /api/v1/media', () => {
  it('stores an image and reports the facts read from its bytes, not from its name or declared type', async () => {
    const u = await userWithKey(api.db);
    const res = await upload(u.key, [
      { name: 'altText', value: 'A red rectangle' },
      { name: 'file', value: files.jpeg1080x1350, filename: 'holiday.png', type: 'image/png' },
    ]);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: stringMatching(/^med_/),
      kind: 'image',
      mime: 'image/jpeg',
      bytes: files.jpeg1080x1350.length,
      width: 1080,
      height: 1350,
      durationMs: null,
      altText: 'A red rectangle',
      createdAt: stringMatching(/Z$/),
    });
    expect(api.media.storedFiles()).toContain(join(api.media.root, 'files', u.userId, res.body.id));
  });

  it('probes a video for its size and duration', async () => {
    const u = await userWithKey(api.db);
    const res = await upload(u.key, [{ name: 'file', value: files.mp4Portrait, filename: 'clip.bin' }]);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ kind: 'video', mime: 'video/mp4', width: 180, height: 320, durationMs: 2000, altText: null });
  });

  it('refuses unsupported and unrecognisable files, keeping nothing', async () => {
    const u = await userWithKey(api.db);
    const before = api.media.storedFiles().length;
    const pdf = await upload(u.key, [{ name: 'file', value: files.pdf, filename: 'x.jpg', type: 'image/jpeg' }]);
    expect(pdf.status).toBe(400);
    expect(pdf.body).toEqual({ error: 'Unsupported media type: application/pdf', code: 'unsupported_media' });
    const text = await upload(u.key, [{ name: 'file', value: files.text, filename: 'x.png' }]);
    expect(text.status).toBe(400);
    expect(text.body).toEqual({ error: 'Unsupported media type: unrecognised file', code: 'unsupported_media' });
    expect(api.media.storedFiles()).toHaveLength(before);
    expect(await mediaCount(u.userId)).toBe(0);
  });

  it('refuses truncated images and videos, keeping nothing', async () => {
    const u = await userWithKey(api.db);
    const before = api.media.storedFiles().length;
    const jpeg = await upload(u.key, [{ name: 'file', value: files.truncatedJpeg, filename: 'a.jpg' }]);
    expect(jpeg.status).toBe(400);
    expect(jpeg.body).toEqual({ error: 'Invalid media file: the image/jpeg file is truncated or corrupt', code: 'invalid_media' });
    const mp4 = await upload(u.key, [{ name: 'file', value: files.truncatedMp4, filename: 'a.mp4' }]);
    expect(mp4.status).toBe(400);
    expect(mp4.body).toEqual({ error: 'Invalid media file: the video/mp4 file is truncated or corrupt', code: 'invalid_media' });
    expect(api.media.storedFiles()).toHaveLength(before);
    expect(await mediaCount(u.userId)).toBe(0);
  });

  it('answers 413 above the upload limit, keeping nothing', async () => {
    const u = await userWithKey(api.db);
    const before = api.media.storedFiles().length;
    const big = Buffer.concat([files.jpeg1080x1350, Buffer.alloc(api.media.maxUploadBytes)]);
    const res = await upload(u.key, [{ name: 'file', value: big, filename: 'big.jpg' }]);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: `File too large: the limit is ${api.media.maxUploadBytes} bytes`, code: 'file_too_large' });
    expect(api.media.storedFiles()).toHaveLength(before);
    expect(await mediaCount(u.userId)).toBe(0);
  });

  it('refuses alt text holding NUL with a detail at altText, keeping nothing', async () => {
    const u = await userWithKey(api.db);
    const before = api.media.storedFiles().length;
    const res = await upload(u.key, [
      { name: 'altText', value: 'A red\u0000 square' },
      { name: 'file', value: files.png64, filename: 'a.png' },
    ]);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Invalid request', code: 'invalid_request', details: [unstorableTextDetail('U+0000 at index 5', ['altText'])] });
    expect(api.media.storedFiles()).toHaveLength(before);
    expect(await mediaCount(u.userId)).toBe(0);
  });

  it('keeps alt text with an emoji as sent; a form cannot carry a lone surrogate, whose bytes decode to U+FFFD', async () => {
    const u = await userWithKey(api.db);
    const emoji = await upload(u.key, [
      { name: 'altText', value: 'A red square \u{1F7E5}' },
      { name: 'file', value: files.png64, filename: 'a.png' },
    ]);
    expect(emoji.status).toBe(201);
    expect(emoji.body.altText).toBe('A red square \u{1F7E5}');
    // A form carries UTF-8, which has no encoding for a surrogate: ED A0 80 (what U+D800 would be) is invalid.
    const lone = await upload(u.key, [
      { name: 'altText', value: Buffer.from([0x61, 0xed, 0xa0, 0x80, 0x62]) },
      { name: 'file', value: files.png64, filename: 'a.png' },
    ]);
    expect(lone.status).toBe(201);
    expect(lone.body.altText).toMatch(/^a\uFFFD+b$/);
  });

  it('validates the form: the file is required, unknown parts and over-long alt text are refused', async () => {
    const u = await userWithKey(api.db);
    const missing = await upload(u.key, [{ name: 'altText', value: 'nothing else' }]);
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({
      error: 'Invalid request',
      code: 'invalid_request',
      details: [{ code: 'invalid_type', expected: 'file', received: 'undefined', path: ['file'], message: 'Required' }],
    });
    const extra = await upload(u.key, [
      { name: 'file', value: files.png64, filename: 'a.png' },
      { name: 'caption', value: 'hello' },
      { name: 'altText', value: 'x'.repeat(1001) },
    ]);
    expect(extra.status).toBe(400);
    expect(extra.body).toEqual({
      error: 'Invalid request',
      code: 'invalid_request',
      details: [
        { code: 'unrecognized_keys', expected: 'never', received: 'caption', path: ['caption'], message: "Unrecognized key: 'caption'" },
        { code: 'too_big', expected: '<=1000', received: '1001', path: ['altText'], message: 'must NOT have more than 1000 characters' },
      ],
    });
    const two = await upload(u.key, [
      { name: 'file', value: files.png64, filename: 'a.png' },
      { name: 'file', value: files.png64, filename: 'b.png' },
    ]);
    expect(two.status).toBe(400);
    expect(api.media.storedFiles().filter((f) => f.includes(u.userId))).toEqual([]);
    expect(await mediaCount(u.userId)).toBe(0);
  });

  it('answers 415 for a body that is not multipart, and JSON operations refuse multipart', async () => {
    const u = await userWithKey(api.db);
    const json = await api.request({ method: 'POST', url: '/api/v1/media', key: u.key, body: { file: 'abc' } });
    expect(json.status).toBe(415);
    expect(json.body).toEqual({ error: 'Unsupported content type: send multipart/form-data', code: 'unsupported_content_type' });
    // A multipart body cut short or without its boundary is a 400 (found by the fuzz test: it was a 500).
    for (const payload of ['not multipart', '--b\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\nabc']) {
      const malformed = await api.request<InvalidRequest>({
        method: 'POST',
        url: '/api/v1/media',
        key: u.key,
        payload,
        headers: { 'content-type': 'multipart/form-data; boundary=b' },
      });
      expect([malformed.status, malformed.body.error, malformed.body.details[0]?.message]).toEqual([
        400,
        'Invalid request',
        'Malformed multipart/form-data body',
      ]);
    }
    const untyped = await api.request({ method: 'POST', url: '/api/v1/media', key: u.key });
    expect([untyped.status, untyped.body]).toEqual([415, { error: 'Unsupported content type: send multipart/form-data', code: 'unsupported_content_type' }]);
    const text = await api.request({ method: 'POST', url: '/api/v1/media', key: u.key, payload: 'abc', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect(text.body).toEqual({ error: 'Unsupported content type: send multipart/form-data', code: 'unsupported_content_type' });
    const { payload, contentType } = multipartBody([{ name: 'accountIds', value: 'acc_a' }]);
    const post = await api.request({ method: 'POST', url: '/api/v1/posts', key: u.key, payload, headers: { 'content-type': contentType } });
    expect(post.status).toBe(415);
    expect(post.body).toEqual({ error: 'Unsupported content type: send application/json', code: 'unsupported_content_type' });
  });

  it('answers 503 naming the tool when the server cannot run its probe, keeping nothing', async () => {
    const u = await userWithKey(api.db);
    const dir = await mkdtemp(join(tmpdir(), 'herald-tools-'));
    const notExecutable = join(dir, 'ffprobe');
    await writeFile(notExecutable, '', { mode: 0o644 });
    const before = api.media.storedFiles().length;
    const cases: [ProbeTools, string][] = [
      [{ ffmpeg: join(dir, 'missing'), ffprobe: ffprobe.path }, 'Media probing not available: the server cannot run ffmpeg (ENOENT)'],
      [{ ffmpeg: ffmpeg.path, ffprobe: notExecutable }, 'Media probing not available: the server cannot run ffprobe (EACCES)'],
    ];
    try {
      for (const [tools, error] of cases) {
        const state = new ServiceState();
        state.attach({ ...api.publishing.serviceDeps, probe: new FfprobeMediaProbe(tools) }, api.state.apiKeyCache());
        const app = await buildApp({ context: state, rateLimits: { limits: UNLIMITED }, loggerInstance: runLogger() });
        try {
          const { payload, contentType } = multipartBody([{ name: 'file', value: files.png64, filename: 'a.png' }]);
          const res = await injectChecked(app, { method: 'POST', url: '/api/v1/media', key: u.key, payload, headers: { 'content-type': contentType } });
          expect([res.status, res.body, res.headers['retry-after']]).toEqual([503, { error, code: 'probe_unavailable' }, '5']);
        } finally {
          await app.close();
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    expect(api.media.storedFiles()).toHaveLength(before);
    expect(await mediaCount(u.userId)).toBe(0);
  });

  it('requires a key before reading the upload', async () => {
    const { payload, contentType } = multipartBody([{ name: 'file', value: files.png64, filename: 'a.png' }]);
    const res = await api.request({ method: 'POST', url: '/api/v1/media', payload, headers: { 'content-type': contentType } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Missing API key', code: 'missing_api_key' });
  });
});

describe('uploaded media in posts', () => {
  it('attaches to a post, and the platform limits see the probed facts', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x');
    const short = (await upload(u.key, [{ name: 'file', value: files.mp4Portrait, filename: 'a.mp4' }])).body;
    const long = (await upload(u.key, [{ name: 'file', value: files.mp4Long150s, filename: 'b.mp4' }])).body;
    expect(long.durationMs).toBe(150_000);

    const ok = await api.request({ method: 'POST', url: '/api/v1/posts', key: u.key, body: { accountIds: [x], caption: 'clip', mediaIds: [short.id] } });
    expect(ok.status).toBe(201);
    const tooLong = await api.request<Schemas['Error']>({
      method: 'POST',
      url: '/api/v1/posts',
      key: u.key,
      body: { accountIds: [x], caption: 'clip', mediaIds: [long.id] },
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error).toMatch(/^X .*140.*150/);
    expect(tooLong.body.details).toBeUndefined();
  });
});

describe('GET /api/v1/media and DELETE /api/v1/media/{id}', () => {
  it("lists only the caller's media, newest first, in pages", async () => {
    const ada = await userWithKey(api.db);
    const bob = await userWithKey(api.db);
    const first = (await upload(ada.key, [{ name: 'file', value: files.png64, filename: 'a.png' }])).body;
    const second = (await upload(ada.key, [{ name: 'file', value: files.jpeg1080x1350, filename: 'b.jpg' }])).body;
    await upload(bob.key, [{ name: 'file', value: files.png64, filename: 'c.png' }]);
    const page = await api.request<Schemas['MediaList']>({ method: 'GET', url: '/api/v1/media', key: ada.key });
    expect(page.status).toBe(200);
    expect(page.body).toEqual({ data: [second, first], limit: 25, offset: 0 });
    const next = await api.request<Schemas['MediaList']>({ method: 'GET', url: '/api/v1/media?limit=1&offset=1', key: ada.key });
    expect(next.body.data).toEqual([first]);
    const bad = await api.request({ method: 'GET', url: '/api/v1/media?limit=0', key: ada.key });
    expect(bad.status).toBe(400);
  });

  it('deletes unused media and its file; drafts lose the attachment', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x');
    const image = (await upload(u.key, [{ name: 'file', value: files.png64, filename: 'a.png' }])).body;
    const draft = await api.request<Schemas['PostCreateResult']>({
      method: 'POST',
      url: '/api/v1/posts',
      key: u.key,
      body: { accountIds: [x], caption: 'd', mediaIds: [image.id] },
    });
    const res = await api.request({ method: 'DELETE', url: `/api/v1/media/${image.id}`, key: u.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect(api.media.storedFiles()).not.toContain(join(api.media.root, 'files', u.userId, image.id));
    expect(await api.db.selectFrom('post_media').selectAll().where('post_id', '=', draft.body.id).execute()).toEqual([]);
    expect(await mediaCount(u.userId)).toBe(0);
  });

  it('refuses to delete media a scheduled or published post uses', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x');
    const image = (await upload(u.key, [{ name: 'file', value: files.png64, filename: 'a.png' }])).body;
    const post = await api.request<Schemas['PostCreateResult']>({
      method: 'POST',
      url: '/api/v1/posts',
      key: u.key,
      body: { accountIds: [x], caption: 's', mediaIds: [image.id], scheduledAt: inOneHour() },
    });
    for (const status of ['scheduled', 'published'] as const) {
      await api.db.updateTable('posts').set({ status }).where('id', '=', post.body.id).execute();
      const res = await api.request({ method: 'DELETE', url: `/api/v1/media/${image.id}`, key: u.key });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'Cannot delete media used by a scheduled or published post', code: 'media_in_use' });
    }
    expect(await mediaCount(u.userId)).toBe(1);
    expect(api.media.storedFiles()).toContain(join(api.media.root, 'files', u.userId, image.id));
  });

  it("answers 404 Media not found for another user's, unknown and malformed ids", async () => {
    const ada = await userWithKey(api.db);
    const bob = await userWithKey(api.db);
    const bobs = (await upload(bob.key, [{ name: 'file', value: files.png64, filename: 'a.png' }])).body;
    for (const id of [bobs.id, 'med_00000000000000000000000000', '..%2F..%2Fetc%2Fpasswd', 'x'.repeat(5000), '%00', `${bobs.id}%00`]) {
      const res = await api.request({ method: 'DELETE', url: `/api/v1/media/${id}`, key: ada.key });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Media not found', code: 'media_not_found' });
    }
    expect(await mediaCount(bob.userId)).toBe(1);
  });
});

describe('a stored file no medium names', () => {
  it('is removed by housekeeping an hour after it was written; the files of media, and newer files, are left', async () => {
    const u = await userWithKey(api.db);
    const medium = (await upload(u.key, [{ name: 'file', value: files.png64, filename: 'a.png' }])).body;
    const folder = join(api.media.root, 'files', u.userId);
    // A file whose row never committed (the database went away between the two), written two hours ago; and one just written.
    const [orphan, fresh] = [join(folder, `med_${randomUUID().replaceAll('-', '')}`), join(folder, `med_${randomUUID().replaceAll('-', '')}`)];
    for (const path of [orphan, fresh]) await writeFile(path, files.png64);
    const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60_000);
    for (const path of [orphan, join(folder, medium.id)]) await utimes(path, twoHoursAgo, twoHoursAgo);

    expect(await keepHouse(api.publishing.deps)).toBe(true);
    expect((await readdir(folder)).sort()).toEqual([medium.id, basename(fresh)].sort());
    const listed = await api.request<{ data: Schemas['Media'][] }>({ method: 'GET', url: '/api/v1/media', key: u.key });
    expect(listed.body.data.map((m) => m.id)).toEqual([medium.id]);
  });
});

describe('the look for stored files no medium names', () => {
  it('looks at a bounded number of files a run, each run going on from where the last stopped, and starts over at the end', async () => {
    const root = await mkdtemp(join(tmpdir(), 'herald-sweep-'));
    try {
      const u = await userWithKey(api.db);
      const medium = (await upload(u.key, [{ name: 'file', value: files.png64, filename: 'a.png' }])).body;
      const folder = join(root, 'files', u.userId);
      await mkdir(folder, { recursive: true });
      const orphans = ['med_a1', 'med_b2', 'med_c3', 'med_d4', 'med_e5'];
      const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60_000);
      for (const name of [...orphans, medium.id]) {
        await writeFile(join(folder, name), files.png64);
        await utimes(join(folder, name), twoHoursAgo, twoHoursAgo);
      }
      const storage = new LocalDiskStorage(root);
      const runs: { removed: number; next: string | undefined }[] = [];
      for (let from: string | undefined; runs.length === 0 || from !== undefined;) {
        const run = await removeOrphanFiles(api.db, storage, new Date(), from, 4);
        runs.push(run);
        from = run.next;
      }
      // Six files, four a run: two runs, the first stopping at its fourth key in key order.
      const inKeyOrder = [...orphans, medium.id].sort();
      const firstRemoved = inKeyOrder.slice(0, 4).filter((name) => name !== medium.id).length;
      expect(runs).toEqual([
        { removed: firstRemoved, next: `${u.userId}/${inKeyOrder[3]}` },
        { removed: orphans.length - firstRemoved, next: undefined },
      ]);
      expect(await readdir(folder)).toEqual([medium.id]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('a file an upload cut short by a crash left in staging', () => {
  it('is removed when the server starts; a file still being written is left alone', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'herald-staging-'));
    const staging = join(dataDir, 'media', 'staging');
    await mkdir(staging, { recursive: true });
    const abandoned = join(staging, randomUUID());
    await writeFile(abandoned, files.png64.subarray(0, 100));
    // Last written two hours ago, when the process that was receiving it stopped.
    const crashedAt = new Date(Date.now() - 2 * 60 * 60_000);
    await utimes(abandoned, crashedAt, crashedAt);
    const arriving = join(staging, randomUUID());
    await writeFile(arriving, files.png64.subarray(0, 100));
    const database = await createTestDatabase();
    const server = await startTestServer({ dataDir, databaseUrl: database.url, migrateOnStart: true, inProcessWorker: false });
    try {
      await server.ready;
      expect(await readdir(staging)).toEqual([basename(arriving)]);
    } finally {
      await server.close();
      await database.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
