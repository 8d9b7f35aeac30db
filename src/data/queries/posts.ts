import type { Insertable, Kysely, Selectable, Transaction } from 'kysely';
import type { Database, PostMediaTable, PostsTable, PostTargetsTable } from '../schema.js';

export type PostRow = Selectable<PostsTable>;

/** A target as the domain states it: jsonb columns as plain values, null for none. */
export interface NewPostTarget extends Omit<Insertable<PostTargetsTable>, 'fields' | 'thread_parts'> {
  fields: Record<string, unknown> | null;
  thread_parts: string[] | null;
}

export interface NewPost {
  post: Insertable<PostsTable>;
  targets: NewPostTarget[];
  media: Insertable<PostMediaTable>[];
}

/** A post, its targets and its media, inside the caller's transaction: all of it is written or none. */
export async function insertPostWithTargets(trx: Transaction<Database>, { post, targets, media }: NewPost): Promise<PostRow> {
  const row = await trx.insertInto('posts').values(post).returningAll().executeTakeFirstOrThrow();
  if (targets.length > 0) {
    await trx
      .insertInto('post_targets')
      .values(targets.map((t) => ({ ...t, fields: toJsonb(t.fields), thread_parts: toJsonb(t.thread_parts) })))
      .execute();
  }
  if (media.length > 0) await trx.insertInto('post_media').values(media).execute();
  return row;
}

/** A value for a jsonb column: its JSON text, or SQL NULL for none. */
function toJsonb(value: object | null): string | null {
  return value === null ? null : JSON.stringify(value);
}

/** One page of the user's posts, newest first, id breaking ties (matches posts_user_id_created_at_id_idx). */
export async function selectPostsPage(db: Kysely<Database>, userId: string, limit: number, offset: number): Promise<PostRow[]> {
  return db
    .selectFrom('posts')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

/** Locks the row until the transaction ends, so its status cannot change between a check and a write. */
export async function selectPostOwnedByForUpdate(db: Kysely<Database>, id: string, userId: string): Promise<PostRow | undefined> {
  return db.selectFrom('posts').selectAll().where('id', '=', id).where('user_id', '=', userId).forUpdate().executeTakeFirst();
}

export async function deletePostById(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('posts').where('id', '=', id).execute();
}
