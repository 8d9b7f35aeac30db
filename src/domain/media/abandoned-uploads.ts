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
