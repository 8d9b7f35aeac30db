import type { Kysely } from 'kysely';
import { deletePostById, deletePostInStatus } from '../../db/queries/posts.js';
import { selectTargetsOfPost } from '../../db/queries/publishing.js';
import type { Database, PostStatus } from '../../db/schema.js';
import { DomainError } from '../errors.js';
import { isWellFormedId } from '../ids.js';
import { POST_NOT_FOUND, withOwnedPost } from './owned-post.js';
import { refuseDeleteOfSentPost } from './post-rules.js';

/**
 * Statuses in which no target has reached a platform or is being sent: a worker's claim moves a
 * post out of them in the same transaction (under the post's lock) as it takes a target.
 */
const UNSENT: readonly PostStatus[] = ['draft', 'scheduled'];

/**
 * Deletes a post of the caller's that no platform has. A draft or scheduled post goes in one
 * statement, without reading it first. Any other post is judged by its targets under its lock.
 */
export async function deletePost(db: Kysely<Database>, userId: string, postId: string): Promise<void> {
  if (!isWellFormedId('post', postId)) throw new DomainError('not_found', POST_NOT_FOUND);
  if (await deletePostInStatus(db, postId, userId, UNSENT)) return;
  await withOwnedPost(db, userId, postId, async (trx) => {
    refuseDeleteOfSentPost(await selectTargetsOfPost(trx, postId));
    await deletePostById(trx, postId);
  });
}
