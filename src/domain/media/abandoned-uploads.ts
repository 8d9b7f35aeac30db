import type { Kysely } from 'kysely';
import { selectStorageKeysIn } from '../../db/queries/media.js';
import type { Database } from '../../db/schema.js';
import type { MediaStorage } from '../ports/media-storage.js';

/**
 * How long a staged upload may go unwritten before it is taken as abandoned. A live upload writes
 * as its bytes arrive and is probed (at most two minutes) and committed at once; an hour is far
 * beyond that, and safe when several processes share the folder.
 */
export const ABANDONED_UPLOAD_MS = 60 * 60_000;

/** Removes the staged files of uploads cut short by a crash (at start, and in housekeeping); how many. */
export async function removeAbandonedUploads(storage: MediaStorage, now: Date): Promise<number> {
  return storage.removeStagedBefore(new Date(now.getTime() - ABANDONED_UPLOAD_MS));
}

/**
 * How many stored files one housekeeping run looks at: a run goes on from where the last one
 * stopped, so a store of millions is gone through over a day or so, a bounded listing each time.
 */
export const STORED_FILES_PER_RUN = 10_000;

/**
 * Removes stored files that no medium names, written before the same hour: a file whose row was
 * never written (the database was lost between the file and its row, or its commit's answer was
 * lost and the row did not commit after all), or whose removal failed after its row was deleted
 * (the store was down). An upload writes its file moments before its row, so an hour never takes a
 * file an upload is about to name. Looks at up to `limit` files in key order after `from`; how
 * many it removed, and the key to go on after (undefined once it has reached the end).
 */
export async function removeOrphanFiles(
  db: Kysely<Database>,
  storage: MediaStorage,
  now: Date,
  from?: string,
  limit = STORED_FILES_PER_RUN,
): Promise<{ removed: number; next: string | undefined }> {
  const cutoff = new Date(now.getTime() - ABANDONED_UPLOAD_MS);
  let removed = 0;
  let looked = 0;
  for await (const page of storage.storedAfter(from)) {
    const files = page.slice(0, limit - looked);
    const old = files.filter((file) => file.writtenAt < cutoff).map((file) => file.key);
    const named = new Set(await selectStorageKeysIn(db, old));
    for (const key of old.filter((k) => !named.has(k))) {
      await storage.remove(key);
      removed += 1;
    }
    looked += files.length;
    if (looked >= limit) return { removed, next: files.at(-1)?.key };
  }
  return { removed, next: undefined };
}
