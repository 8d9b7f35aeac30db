import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { LocalDiskStorage } from './local-disk-storage.js';
import type { S3Storage, StoredObject } from './s3-storage.js';

export interface MigrationCounts {
  moved: number;
  skipped: number;
  failed: number;
}

/** What became of one medium's file: moved now, found in the bucket already, or left where it was, and why. */
export type MoveOutcome = { result: 'moved' } | { result: 'skipped' } | { result: 'failed'; reason: string };

const ROWS_PER_READ = 100;

/**
 * Moves every stored medium's file from the local folder to the bucket, in id order. A local copy
 * is removed only once the bucket holds an object of its size declaring the SHA-256 of the bytes
 * sent, so every file is whole in one place at least, at every moment; a run cut short is finished
 * by running it again, which skips the files already in the bucket. A file that cannot be moved is
 * left where it was, and the run goes on with the next.
 */
export async function migrateMediaToS3(
  db: Kysely<Database>,
  from: LocalDiskStorage,
  to: S3Storage,
  progress: (mediaId: string, outcome: MoveOutcome, counts: MigrationCounts) => void,
): Promise<MigrationCounts> {
  const counts: MigrationCounts = { moved: 0, skipped: 0, failed: 0 };
  for (let after = ''; ;) {
    const rows = await db
      .selectFrom('media_assets')
      .select(['id', 'bytes', 'storage_key'])
      .where('storage_key', 'is not', null)
      .where('id', '>', after)
      .orderBy('id')
      .limit(ROWS_PER_READ)
      .execute();
    for (const { id, bytes, storage_key: key } of rows) {
      const outcome =
        key === null
          ? failed('the row names no file')
          : await move(from, to, key, Number(bytes)).catch((err: unknown) => failed(err instanceof Error ? err.message : String(err)));
      counts[outcome.result] += 1;
      progress(id, outcome, { ...counts });
    }
    const last = rows.at(-1);
    if (last === undefined || rows.length < ROWS_PER_READ) return counts;
    after = last.id;
  }
}

async function move(from: LocalDiskStorage, to: S3Storage, key: string, bytes: number): Promise<MoveOutcome> {
  const path = from.pathOf(key);
  const local = await stat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  const stored = await to.stat(key);
  if (local === undefined) {
    // Moved by an earlier run, which checked the object before it removed the local copy.
    if (stored?.bytes === bytes && stored.sha256 !== null) return { result: 'skipped' };
    return failed(
      stored === undefined ? 'the file is neither in the local folder nor in the bucket' : `no local copy, and the bucket holds ${describe(stored)}`,
    );
  }
  if (local.size !== bytes) return failed(`the local file has ${local.size} bytes where the row records ${bytes}`);
  const sha256 = await sha256Of(path);
  // In the bucket already: an earlier run was stopped between its check and the removal.
  const there = stored?.bytes === bytes && stored.sha256 === sha256;
  if (!there) {
    const sent = await to.upload(path, key, { bytes, sha256 });
    if (sent !== sha256) return failed('the local file changed while it was uploaded');
    const uploaded = await to.stat(key);
    if (uploaded?.bytes !== bytes || uploaded.sha256 !== sha256) {
      return failed(`after the upload the bucket holds ${uploaded === undefined ? 'nothing' : describe(uploaded)}, not ${bytes} bytes with SHA-256 ${sha256}`);
    }
  }
  await from.remove(key);
  return { result: there ? 'skipped' : 'moved' };
}

function failed(reason: string): MoveOutcome {
  return { result: 'failed', reason };
}

function describe(object: StoredObject): string {
  return `${object.bytes} bytes with ${object.sha256 === null ? 'no SHA-256' : `SHA-256 ${object.sha256}`}`;
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
