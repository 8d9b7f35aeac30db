import type { Kysely } from 'kysely';
import type { PostRow } from '../../data/queries/posts.js';
import type { Database } from '../../data/schema.js';
import type { PublicationQueue } from '../../queue/publication-queue.js';

export interface Wake {
  publish_job_id: string | null;
  next_check_at: Date | null;
}

/**
 * Moves when a worker next looks at a post, in the caller's transaction: its queue job (what
 * wakes a waiting worker) and its next_check_at (what a worker looking for due work reads,
 * through an index, whatever the backlog), always together. Null: nothing to look at.
 */
export async function moveWake(trx: Kysely<Database>, queue: PublicationQueue, post: Pick<PostRow, 'id' | 'publish_job_id'>, at: Date | null): Promise<Wake> {
  if (post.publish_job_id !== null) await queue.cancel(trx, post.publish_job_id);
  if (at === null) return { publish_job_id: null, next_check_at: null };
  return { publish_job_id: await queue.wake(trx, post.id, at), next_check_at: at };
}
