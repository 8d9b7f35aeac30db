import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Database, MediaAssetsTable } from '../schema.js';

export type MediaRow = Selectable<MediaAssetsTable>;

export async function insertMediaAsset(db: Kysely<Database>, media: Insertable<MediaAssetsTable>): Promise<void> {
  await db.insertInto('media_assets').values(media).execute();
}

export async function selectMediaOwnedBy(db: Kysely<Database>, userId: string, ids: readonly string[]): Promise<MediaRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('media_assets').selectAll().where('owner_user_id', '=', userId).where('id', 'in', ids).execute();
}
