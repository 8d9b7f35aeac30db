import type { Kysely } from 'kysely';
import { deletePostById, deletePostInStatus } from '../../data/queries/posts.js';
import { selectTargetsOfPost } from '../../data/queries/publishing.js';
import type { Database, PostStatus } from '../../data/schema.js';
import type { PublicationQueue } from '../../queue/publication-queue.js';
import { DomainError } from '../errors.js';
import { isWellFormedId } from '../ids.js';
import { moveWake } from '../publishing/wake.js';
import { POST_NOT_FOUND, withOwnedPost } from './owned-post.js';
import { refuseDeleteOfSentPost } from './post-rules.js';

/**
 * Statuses in which no target has reached a platform or is being sent: a worker's claim moves a
 * post out of them in the same transaction (under the post's lock) as it takes a target.
 */
const UNSENT: readonly PostStatus[] = ['draft', 'scheduled'];

/**
 * Deletes a post of the caller's that no platform has. A draft or scheduled post goes in one
 * statement, without reading it first; its job is cancelled right after (a job whose post is gone
 * finds nothing to do, so one left by a crash in between is harmless). Any other post is judged
 * by its targets under its lock, its job going in the same transaction.
 */
export async function deletePost(db: Kysely<Database>, queue: PublicationQueue, userId: string, postId: string): Promise<void> {
  if (!isWellFormedId('post', postId)) throw new DomainError('not_found', POST_NOT_FOUND);
  const deleted = await deletePostInStatus(db, postId, userId, UNSENT);
  if (deleted !== undefined) {
    if (deleted.publish_job_id !== null) await queue.cancel(db, deleted.publish_job_id);
    return;
  }
  await withOwnedPost(db, userId, postId, async (trx, post) => {
    refuseDeleteOfSentPost(await selectTargetsOfPost(trx, postId));
    await moveWake(trx, queue, post, null);
    await deletePostById(trx, postId);
  });
}
