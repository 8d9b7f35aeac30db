import type { Kysely } from 'kysely';
import { deleteMediaAttachments, deleteMediaById, selectMediaOwnedByForUpdate, selectStatusesOfPostsUsingMedia } from '../../db/queries/media.js';
import type { Database } from '../../db/schema.js';
import type { MediaStorage } from '../ports/media-storage.js';
import { DomainError } from '../errors.js';
import { isWellFormedId } from '../ids.js';

export const MEDIA_NOT_FOUND = 'Media not found';

/**
 * Deletes the caller's media and its file, unless a scheduled or published post needs it; drafts
 * simply lose the attachment. The file goes only after the rows are gone.
 */
export async function deleteMedia(db: Kysely<Database>, storage: MediaStorage, userId: string, mediaId: string): Promise<void> {
  if (!isWellFormedId('med', mediaId)) throw new DomainError('not_found', MEDIA_NOT_FOUND);
  const storageKey = await db.transaction().execute(async (trx) => {
    const media = await selectMediaOwnedByForUpdate(trx, mediaId, userId);
    if (!media) throw new DomainError('not_found', MEDIA_NOT_FOUND);
    const statuses = await selectStatusesOfPostsUsingMedia(trx, mediaId);
    if (statuses.some((s) => s !== 'draft')) {
      throw new DomainError('not_allowed', 'Cannot delete media used by a scheduled or published post', undefined, 'media_in_use');
    }
    await deleteMediaAttachments(trx, mediaId);
    await deleteMediaById(trx, mediaId);
    return media.storage_key;
  });
  if (storageKey !== null) await storage.remove(storageKey);
}
