import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FfprobeMediaProbe } from '../../src/adapters/probe/ffprobe-media-probe.js';
import { LocalDiskStorage } from '../../src/adapters/storage/local-disk-storage.js';
import { storeMediaFile } from '../../src/domain/media/store-media-file.js';
import { herald, json } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { makeDataDir, removeDataDir } from '../support/data-dir.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { media, userWithKey, type TestUser } from '../support/fixtures.js';
import { stringMatching } from '../support/matchers.js';
import { makeMediaFiles, type MediaFiles } from '../support/media-files.js';
import { startS3Fake, type S3Fake } from '../support/s3-fake.js';

// `herald media migrate`, the binary an operator runs: the files of a data folder go to the bucket,
// each checked there before its local copy goes; a second run skips what the first moved; an
// object that does not match what was sent keeps the local copy and fails the run.
let database: TestDatabase;
let dataDir: string;
let s3: S3Fake;
let faults: FaultProxy;
let files: MediaFiles;
let local: LocalDiskStorage;
let u: TestUser;
let env: Record<string, string>;
const TARGET = 'moved/here';

beforeAll(async () => {
  files = makeMediaFiles();
  [database, dataDir, s3] = await Promise.all([createTestDatabase(), makeDataDir('herald-migrate-'), startS3Fake()]);
  faults = await startFaultProxy(s3.url);
  local = new LocalDiskStorage(join(dataDir, 'media'));
  u = await userWithKey(database.db);
  env = { DATABASE_URL: database.url, HERALD_DATA_DIR: dataDir, ...s3.env() };
});
afterAll(async () => {
  await faults?.close();
  await s3?.close();
  await database?.close();
  await removeDataDir(dataDir);
  files?.cleanup();
});

/** A medium stored in the data folder, as Herald without HERALD_MEDIA_URL keeps it. */
async function localMedium(bytes: Buffer): Promise<{ id: string; key: string; bytes: Buffer }> {
  const row = await storeMediaFile(database.db, local, new FfprobeMediaProbe(), u.userId, await local.stage(Readable.from([bytes])), null);
  return { id: row.id, key: row.storage_key ?? '', bytes };
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const migrate = (through = s3.url) => herald(['media', 'migrate', '--to', `s3://${s3.bucket}/${TARGET}`], { ...env, ...s3.env(through) });
const progressOf = (stderr: string) => stderr.trim().split('\n');

describe('herald media migrate', { timeout: 180_000 }, () => {
  it('moves every file to the bucket, checked, and skips them when run again', async () => {
    const moving = [await localMedium(files.png64), await localMedium(files.jpeg1080x1350), await localMedium(files.mp4Portrait)];
    // A medium of stated facts has no file, and is not the migration's business.
    await media(database.db, u.userId);

    const first = await migrate();
    expect(json(first)).toEqual({ moved: 3, skipped: 0, failed: 0 });
    expect(progressOf(first.stderr)).toEqual(
      moving
        .map(({ id }) => id)
        .sort()
        .map((id, i) => `herald media migrate: ${id} moved (moved ${i + 1}, skipped 0, failed 0)`),
    );
    for (const { key, bytes } of moving) {
      expect(await s3.object(`${TARGET}/${key}`)).toEqual({ bytes, sha256: sha256(bytes) });
      expect(existsSync(local.pathOf(key))).toBe(false);
    }

    const again = await migrate();
    expect(json(again)).toEqual({ moved: 0, skipped: 3, failed: 0 });
    expect(progressOf(again.stderr).every((line) => / skipped \(/.test(line))).toBe(true);
  });

  it('keeps the local copy and fails the run when the stored object does not match, then finishes when run again', async () => {
    const { id, key, bytes } = await localMedium(files.png64);
    // The store claims an object of the right size but another content, before and after the upload.
    faults.plan(({ method, path }) =>
      method === 'HEAD' && path.endsWith(`/${key}`)
        ? { kind: 'commitThenAnswer', status: 200, headers: { 'content-length': String(bytes.length), 'x-amz-meta-sha256': '0'.repeat(64) } }
        : undefined,
    );
    const refused = await migrate(faults.url);
    faults.plan(() => undefined);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toEqual({ moved: 0, skipped: 3, failed: 1 });
    const failure = `${id} failed: after the upload the bucket holds ${bytes.length} bytes with SHA-256 ${'0'.repeat(64)}, not ${bytes.length} bytes with SHA-256 ${sha256(bytes)}`;
    // Media go in id order: the counts on its line are those of the media before it.
    expect(progressOf(refused.stderr)).toContainEqual(stringMatching(new RegExp(`^herald media migrate: ${failure} \\(moved 0, skipped [0-3], failed 1\\)$`)));
    expect(existsSync(local.pathOf(key))).toBe(true);

    // The upload itself had reached the bucket: checked true this time, it is found there and only the local copy goes.
    expect(json(await migrate())).toEqual({ moved: 0, skipped: 4, failed: 0 });
    expect(existsSync(local.pathOf(key))).toBe(false);
    expect((await s3.object(`${TARGET}/${key}`))?.bytes).toEqual(bytes);
  });

  it('stores new media in the bucket once HERALD_MEDIA_URL names it, and refuses a media URL that is not a bucket', async () => {
    const path = join(dataDir, 'upload.png');
    await writeFile(path, files.png64);
    const onBucket = { ...env, HERALD_MEDIA_URL: `s3://${s3.bucket}/${TARGET}` };
    const { id } = json<{ id: string }>(await herald(['media', 'add', '--user', u.userId, '--file', path], onBucket));
    expect((await s3.object(`${TARGET}/${u.userId}/${id}`))?.bytes).toEqual(files.png64);
    expect(existsSync(local.pathOf(`${u.userId}/${id}`))).toBe(false);

    const refused = await herald(['media', 'add', '--user', u.userId, '--file', path], { ...env, HERALD_MEDIA_URL: 'https://media.example/herald' });
    expect([refused.code, refused.stderr]).toEqual([
      1,
      'herald: HERALD_MEDIA_URL must be s3://bucket or s3://bucket/prefix (unset: the data folder), got https://media.example/herald\n',
    ]);
    const noBucket = await herald(['media', 'migrate', '--to', 'https://media.example'], env);
    expect([noBucket.code, noBucket.stderr]).toEqual([
      1,
      "herald: option '--to <url>' argument 'https://media.example' is invalid. Expected s3://bucket or s3://bucket/prefix.\n",
    ]);
  });
});
