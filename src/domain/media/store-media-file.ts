import type { Kysely } from 'kysely';
import { insertMediaAsset, type MediaRow } from '../../db/queries/media.js';
import type { Database } from '../../db/schema.js';
import type { MediaProbe } from '../ports/media-probe.js';
import type { MediaStorage, StagedFile } from '../ports/media-storage.js';
import { DomainError } from '../errors.js';
import { newId } from '../ids.js';

/**
 * Turns a staged upload into a media asset: probes its bytes, refuses what the platforms cannot take,
 * then stores the file and records its facts. On any failure nothing is left, neither file nor row.
 */
export async function storeMediaFile(
  db: Kysely<Database>,
  storage: MediaStorage,
  probe: MediaProbe,
  userId: string,
  staged: StagedFile,
  altText: string | null,
): Promise<MediaRow> {
  let committedKey: string | undefined;
  try {
    const probed = await probe.probe(staged.path);
    if ('problem' in probed) {
      throw probed.problem === 'unsupported'
        ? new DomainError('unusable_file', `Unsupported media type: ${probed.mime ?? 'unrecognised file'}`, undefined, 'unsupported_media')
        : new DomainError('unusable_file', `Invalid media file: the ${probed.mime} file is truncated or corrupt`);
    }
    const id = newId('med');
    const key = `${userId}/${id}`;
    await storage.commit(staged, key);
    committedKey = key;
    return await insertMediaAsset(db, {
      id,
      owner_user_id: userId,
      kind: probed.kind,
      mime: probed.mime,
      bytes: staged.bytes,
      width: probed.width,
      height: probed.height,
      duration_ms: probed.durationMs,
      storage_key: key,
      alt_text: altText,
    });
  } catch (err) {
    await staged.discard();
    if (committedKey !== undefined) await storage.remove(committedKey);
    throw err;
  }
}
