import type { Insertable, Kysely, Selectable, Transaction } from 'kysely';
import { compiledOnce } from '../compiled-query.js';
import type { Database, MediaAssetsTable } from '../schema.js';

export type MediaRow = Selectable<MediaAssetsTable>;

/** The columns the platform limits judge a medium by. */
const MEDIA_FACTS_COLUMNS = ['id', 'kind', 'mime', 'bytes', 'width', 'height', 'duration_ms'] as const;
export type MediaFactsRow = Pick<MediaRow, (typeof MEDIA_FACTS_COLUMNS)[number]>;

export async function insertMediaAsset(db: Kysely<Database>, media: Insertable<MediaAssetsTable>): Promise<MediaRow> {
  return db.insertInto('media_assets').values(media).returningAll().executeTakeFirstOrThrow();
}

/**
 * The user's media among these ids, each row locked against deletion until the transaction ends
 * (FOR KEY SHARE, the lock the post_media foreign key takes; it waits for deleteMedia's FOR UPDATE).
 */
export async function selectMediaOwnedByForKeyShare(trx: Transaction<Database>, userId: string, ids: readonly string[]): Promise<MediaFactsRow[]> {
  return ids.length === 0 ? [] : mediaOwnedByForKeyShare(trx, userId, [...ids]);
}

const mediaOwnedByForKeyShare = compiledOnce((db, userId: string, ids: string[]) =>
  db
    .selectFrom('media_assets')
    .select(MEDIA_FACTS_COLUMNS)
    .where('owner_user_id', '=', userId)
    .where((eb) => eb('id', '=', eb.fn.any(eb.val(ids))))
    .forKeyShare(),
);

/** One page of the user's media, newest first (matches media_assets_owner_created_at_id_idx). */
export async function selectMediaPage(db: Kysely<Database>, userId: string, limit: number, offset: number): Promise<MediaRow[]> {
  return db
    .selectFrom('media_assets')
    .selectAll()
    .where('owner_user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

/** Locks the row until the transaction ends, so no post can attach it between a check and the delete. */
export async function selectMediaOwnedByForUpdate(db: Kysely<Database>, id: string, userId: string): Promise<MediaRow | undefined> {
  return db.selectFrom('media_assets').selectAll().where('id', '=', id).where('owner_user_id', '=', userId).forUpdate().executeTakeFirst();
}

/** Statuses of the posts the media is attached to. */
export async function selectStatusesOfPostsUsingMedia(db: Kysely<Database>, mediaId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('post_media')
    .innerJoin('posts', 'posts.id', 'post_media.post_id')
    .select('posts.status')
    .distinct()
    .where('post_media.media_id', '=', mediaId)
    .execute();
  return rows.map((r) => r.status);
}

export async function deleteMediaAttachments(db: Kysely<Database>, mediaId: string): Promise<void> {
  await db.deleteFrom('post_media').where('media_id', '=', mediaId).execute();
}

export async function deleteMediaById(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('media_assets').where('id', '=', id).execute();
}

/** Which of these storage keys a medium names. */
export async function selectStorageKeysIn(db: Kysely<Database>, keys: readonly string[]): Promise<string[]> {
  if (keys.length === 0) return [];
  const rows = await db.selectFrom('media_assets').select('storage_key').where('storage_key', 'in', keys).execute();
  return rows.flatMap((row) => (row.storage_key === null ? [] : [row.storage_key]));
}

/** What serving a medium's file needs. */
export async function selectMediaById(db: Kysely<Database>, id: string): Promise<Pick<MediaRow, 'mime' | 'bytes' | 'storage_key'> | undefined> {
  return db.selectFrom('media_assets').select(['mime', 'bytes', 'storage_key']).where('id', '=', id).executeTakeFirst();
}
