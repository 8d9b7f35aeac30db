import type { Kysely } from 'kysely';
import { deletePostById } from '../../data/queries/posts.js';
import { selectTargetsOfPost } from '../../data/queries/publishing.js';
import type { Database } from '../../data/schema.js';
import type { PublicationQueue } from '../../queue/publication-queue.js';
import { moveWake } from '../publishing/wake.js';
import { withOwnedPost } from './owned-post.js';
import { refuseDeleteOfSentPost } from './post-rules.js';

/** Deletes a post of the caller's that no platform has: its publication job goes in the same transaction, so no job outlives its post. */
export async function deletePost(db: Kysely<Database>, queue: PublicationQueue, userId: string, postId: string): Promise<void> {
  await withOwnedPost(db, userId, postId, async (trx, post) => {
    refuseDeleteOfSentPost(await selectTargetsOfPost(trx, postId));
    await moveWake(trx, queue, post, null);
    await deletePostById(trx, postId);
  });
}
