import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Database, PostMediaTable, PostsTable, PostTargetsTable } from '../schema.js';

export type PostRow = Selectable<PostsTable>;

export interface NewPost {
  post: Insertable<PostsTable>;
  targets: Insertable<PostTargetsTable>[];
  media: Insertable<PostMediaTable>[];
}

/** A post, its targets and its media in one transaction: all of it is written or none. */
export async function insertPostWithTargets(db: Kysely<Database>, { post, targets, media }: NewPost): Promise<PostRow> {
  return db.transaction().execute(async (trx) => {
    const row = await trx.insertInto('posts').values(post).returningAll().executeTakeFirstOrThrow();
    if (targets.length > 0) await trx.insertInto('post_targets').values(targets).execute();
    if (media.length > 0) await trx.insertInto('post_media').values(media).execute();
    return row;
  });
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
