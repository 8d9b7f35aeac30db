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
 * Removes stored files that no medium names, written before the same hour: a file whose row was
 * never written (the database was lost between the file and its row, or its commit's answer was
 * lost and the row did not commit after all), or whose removal failed after its row was deleted
 * (the store was down). An upload writes its file moments before its row, so an hour never takes a
 * file an upload is about to name; how many it removed.
 */
export async function removeOrphanFiles(db: Kysely<Database>, storage: MediaStorage, now: Date): Promise<number> {
  let removed = 0;
  for await (const keys of storage.storedBefore(new Date(now.getTime() - ABANDONED_UPLOAD_MS))) {
    const named = new Set(await selectStorageKeysIn(db, keys));
    for (const key of keys.filter((k) => !named.has(k))) {
      await storage.remove(key);
      removed += 1;
    }
  }
  return removed;
}
