import type { Kysely } from 'kysely';
import { selectMediaPage } from '../../db/queries/media.js';
import type { Database } from '../../db/schema.js';
import type { MediaList } from '../api-types.js';
import { toMediaView } from './media-view.js';

export async function listMedia(db: Kysely<Database>, userId: string, limit: number, offset: number): Promise<MediaList> {
  const rows = await selectMediaPage(db, userId, limit, offset);
  return { data: rows.map(toMediaView), limit, offset };
}
