import type { Kysely, Transaction } from 'kysely';
import { selectPostOwnedByForUpdate, type PostRow } from '../../db/queries/posts.js';
import type { Database } from '../../db/schema.js';
import { DomainError } from '../errors.js';
import { isWellFormedId } from '../ids.js';

export const POST_NOT_FOUND = 'Post not found';

/**
 * Runs `work` in a transaction holding the lock on one of the caller's posts, so that its status
 * cannot change between a check and a write (a worker takes the same lock). Anything that is not
 * the caller's post is simply not found.
 */
export async function withOwnedPost<T>(
  db: Kysely<Database>,
  userId: string,
  postId: string,
  work: (trx: Transaction<Database>, post: PostRow) => Promise<T>,
): Promise<T> {
  if (!isWellFormedId('post', postId)) throw new DomainError('not_found', POST_NOT_FOUND);
  return db.transaction().execute(async (trx) => {
    const post = await selectPostOwnedByForUpdate(trx, postId, userId);
    if (!post) throw new DomainError('not_found', POST_NOT_FOUND);
    return work(trx, post);
  });
}
