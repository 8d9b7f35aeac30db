import type { Kysely } from 'kysely';
import { deletePostById, selectPostOwnedByForUpdate } from '../../data/queries/posts.js';
import type { Database } from '../../data/schema.js';
import { DomainError } from '../errors.js';
import { isWellFormedId } from '../ids.js';

export const POST_NOT_FOUND = 'Post not found';

/** Deletes a draft or scheduled post of the caller's; anything that is not theirs is simply not found. */
export async function deletePost(db: Kysely<Database>, userId: string, postId: string): Promise<void> {
  if (!isWellFormedId('post', postId)) throw new DomainError('not_found', POST_NOT_FOUND);
  await db.transaction().execute(async (trx) => {
    const post = await selectPostOwnedByForUpdate(trx, postId, userId);
    if (!post) throw new DomainError('not_found', POST_NOT_FOUND);
    if (post.status === 'published') throw new DomainError('not_allowed', 'Cannot delete published post');
    await deletePostById(trx, postId);
  });
}
