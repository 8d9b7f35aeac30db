import type { Insertable, Kysely, Selectable, Transaction } from 'kysely';
import type { Database, PostMediaTable, PostStatus, PostsTable, PostTargetsTable } from '../schema.js';

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
  await insertContents(trx, { targets, media });
  return row;
}

async function insertContents(trx: Transaction<Database>, { targets, media }: Omit<NewPost, 'post'>): Promise<void> {
  if (targets.length > 0) {
    await trx
      .insertInto('post_targets')
      .values(targets.map((t) => ({ ...t, fields: toJsonb(t.fields), thread_parts: toJsonb(t.thread_parts) })))
      .execute();
  }
  if (media.length > 0) await trx.insertInto('post_media').values(media).execute();
}

/** Replaces a post's targets and media inside the caller's transaction (an edit of an unpublished post). */
export async function replacePostContents(trx: Transaction<Database>, postId: string, contents: Omit<NewPost, 'post'>): Promise<void> {
  await trx.deleteFrom('post_targets').where('post_id', '=', postId).execute();
  await trx.deleteFrom('post_media').where('post_id', '=', postId).execute();
  await insertContents(trx, contents);
}

export interface TargetWithAccount extends Selectable<PostTargetsTable> {
  platform: string;
  username: string;
}

/** A post's targets in request order, with what the API shows of their accounts. */
export async function selectTargetsWithAccounts(db: Kysely<Database>, postId: string): Promise<TargetWithAccount[]> {
  return db
    .selectFrom('post_targets')
    .innerJoin('accounts', 'accounts.id', 'post_targets.account_id')
    .selectAll('post_targets')
    .select(['accounts.platform', 'accounts.username'])
    .where('post_targets.post_id', '=', postId)
    .orderBy('post_targets.position')
    .execute();
}

export async function selectMediaIdsOfPost(db: Kysely<Database>, postId: string): Promise<string[]> {
  const rows = await db.selectFrom('post_media').select('media_id').where('post_id', '=', postId).orderBy('position').execute();
  return rows.map((r) => r.media_id);
}

/** A value for a jsonb column: its JSON text, or SQL NULL for none. */
function toJsonb(value: object | null): string | null {
  return value === null ? null : JSON.stringify(value);
}

/** One page of the user's posts, newest first, id breaking ties (matches the user's indexes, with or without status). */
export async function selectPostsPage(db: Kysely<Database>, userId: string, limit: number, offset: number, status?: PostStatus): Promise<PostRow[]> {
  let query = db.selectFrom('posts').selectAll().where('user_id', '=', userId);
  if (status !== undefined) query = query.where('status', '=', status);
  return query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

export async function selectPostOwnedBy(db: Kysely<Database>, id: string, userId: string): Promise<PostRow | undefined> {
  return db.selectFrom('posts').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
}

/** Locks the row until the transaction ends, so its status cannot change between a check and a write. */
export async function selectPostOwnedByForUpdate(db: Kysely<Database>, id: string, userId: string): Promise<PostRow | undefined> {
  return db.selectFrom('posts').selectAll().where('id', '=', id).where('user_id', '=', userId).forUpdate().executeTakeFirst();
}

export async function deletePostById(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('posts').where('id', '=', id).execute();
}
