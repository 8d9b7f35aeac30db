import type { Kysely } from 'kysely';
import { insertMediaAsset, selectMediaById, type MediaRow } from '../../db/queries/media.js';
import type { Database } from '../../db/schema.js';
import type { KeepWithWork } from '../idempotency.js';
import type { MediaProbe } from '../ports/media-probe.js';
import type { MediaStorage, StagedFile } from '../ports/media-storage.js';
import { DomainError } from '../errors.js';
import { newId } from '../ids.js';

/**
 * Turns a staged upload into a media asset: probes its bytes, refuses what the platforms cannot take,
 * then stores the file and records its facts, with the answer kept for an Idempotency-Key (`keep`)
 * in the same transaction. On any failure nothing is left, neither file nor row.
 */
export async function storeMediaFile(
  db: Kysely<Database>,
  storage: MediaStorage,
  probe: MediaProbe,
  userId: string,
  staged: StagedFile,
  altText: string | null,
  keep?: KeepWithWork<MediaRow>,
): Promise<MediaRow> {
  const id = newId('med');
  let committedKey: string | undefined;
  try {
    const probed = await probe.probe(staged.path);
    if ('problem' in probed) {
      throw probed.problem === 'unsupported'
        ? new DomainError('unusable_file', `Unsupported media type: ${probed.mime ?? 'unrecognised file'}`, undefined, 'unsupported_media')
        : new DomainError('unusable_file', `Invalid media file: the ${probed.mime} file is truncated or corrupt`);
    }
    const key = `${userId}/${id}`;
    await storage.commit(staged, key);
    committedKey = key;
    return await db.transaction().execute(async (trx) => {
      const row = await insertMediaAsset(trx, {
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
      await keep?.(trx, row);
      return row;
    });
  } catch (err) {
    await staged.discard();
    if (committedKey !== undefined && !(await mayBeRecorded(db, id))) await storage.remove(committedKey);
    throw err;
  }
}

/**
 * Whether the row may exist after its transaction failed: a COMMIT whose acknowledgement was lost
 * did record it (and the key's retry replays it), so its file stays unless the row is known absent.
 */
async function mayBeRecorded(db: Kysely<Database>, id: string): Promise<boolean> {
  try {
    return (await selectMediaById(db, id)) !== undefined;
  } catch {
    return true;
  }
}
