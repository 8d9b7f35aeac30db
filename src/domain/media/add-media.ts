import { createReadStream } from 'node:fs';
import type { Kysely } from 'kysely';
import { insertMediaAsset } from '../../db/queries/media.js';
import type { Database } from '../../db/schema.js';
import type { MediaProbe } from '../ports/media-probe.js';
import type { MediaStorage } from '../ports/media-storage.js';
import { DomainError } from '../errors.js';
import { newId } from '../ids.js';
import type { MediaFacts } from '../platforms/index.js';
import { requireUser } from '../users.js';
import { storeMediaFile } from './store-media-file.js';

/** A media asset's facts as an operator states them (the id is made here). */
export type MediaFactsInput = Omit<MediaFacts, 'id'>;

/** Records a media asset from stated facts alone (for scripting; no file is stored). */
export async function addMedia(db: Kysely<Database>, userId: string, facts: MediaFactsInput): Promise<{ id: string }> {
  await requireUser(db, userId);
  if (!/^[a-z]+\/[a-z0-9.+-]+$/i.test(facts.mime)) throw new DomainError('invalid_request', `Invalid mime type: ${facts.mime}`);
  if (facts.kind === 'image' && facts.durationMs !== null) {
    throw new DomainError('invalid_request', 'Only videos have a duration');
  }
  const row = await insertMediaAsset(db, {
    id: newId('med'),
    owner_user_id: userId,
    kind: facts.kind,
    mime: facts.mime,
    bytes: facts.bytes,
    width: facts.width,
    height: facts.height,
    duration_ms: facts.durationMs,
    storage_key: null,
    alt_text: null,
  });
  return { id: row.id };
}

/** Records a media asset from a local file, probed and stored exactly like an upload. */
export async function addMediaFromFile(db: Kysely<Database>, storage: MediaStorage, probe: MediaProbe, userId: string, path: string): Promise<{ id: string }> {
  await requireUser(db, userId);
  const staged = await storage.stage(createReadStream(path));
  const row = await storeMediaFile(db, storage, probe, userId, staged, null);
  return { id: row.id };
}
