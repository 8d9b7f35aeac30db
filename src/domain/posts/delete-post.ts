import type { Kysely } from 'kysely';
import { deletePostById, selectPostOwnedByForUpdate } from '../../data/queries/posts.js';
import { selectTargetsOfPost } from '../../data/queries/publishing.js';
import type { Database } from '../../data/schema.js';
import type { PublicationQueue } from '../../queue/publication-queue.js';
import { DomainError } from '../errors.js';
import { isWellFormedId } from '../ids.js';
import { refuseDeleteOfSentPost } from './post-rules.js';

export const POST_NOT_FOUND = 'Post not found';

/**
 * Deletes a post of the caller's that no platform has: its publication job goes in the same
 * transaction, so no job outlives its post. Anything that is not theirs is simply not found.
 */
export async function deletePost(db: Kysely<Database>, queue: PublicationQueue, userId: string, postId: string): Promise<void> {
  if (!isWellFormedId('post', postId)) throw new DomainError('not_found', POST_NOT_FOUND);
  await db.transaction().execute(async (trx) => {
    const post = await selectPostOwnedByForUpdate(trx, postId, userId);
    if (!post) throw new DomainError('not_found', POST_NOT_FOUND);
    refuseDeleteOfSentPost(await selectTargetsOfPost(trx, postId));
    if (post.publish_job_id !== null) await queue.cancel(trx, post.publish_job_id);
    await deletePostById(trx, postId);
  });
}
