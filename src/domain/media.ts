import type { Kysely } from 'kysely';
import { insertMediaAsset } from '../data/queries/media.js';
import { userExists } from '../data/queries/users.js';
import type { Database } from '../data/schema.js';
import { DomainError } from './errors.js';
import { newId } from './ids.js';

export interface MediaFactsInput {
  kind: 'image' | 'video';
  mime: string;
  bytes: number;
  width: number | null;
  height: number | null;
  durationMs: number | null;
}

/** Records a media asset's facts for a user (the platform rules read them when the media is attached). */
export async function addMedia(db: Kysely<Database>, userId: string, facts: MediaFactsInput): Promise<{ id: string }> {
  if (!(await userExists(db, userId))) throw new DomainError('not_found', `User not found: ${userId}`);
  if (!/^[a-z]+\/[a-z0-9.+-]+$/i.test(facts.mime)) throw new DomainError('invalid_request', `Invalid mime type: ${facts.mime}`);
  if (facts.kind === 'image' && facts.durationMs !== null) {
    throw new DomainError('invalid_request', 'Only videos have a duration');
  }
  const id = newId('med');
  await insertMediaAsset(db, {
    id,
    owner_user_id: userId,
    kind: facts.kind,
    mime: facts.mime,
    bytes: facts.bytes,
    width: facts.width,
    height: facts.height,
    duration_ms: facts.durationMs,
  });
  return { id };
}
