import type { Kysely } from 'kysely';
import { selectTargetsOfPost, updatePost, updateTarget } from '../../data/queries/publishing.js';
import type { Database } from '../../data/schema.js';
import type { PublicationQueue } from '../../queue/publication-queue.js';
import type { PostDetail } from '../api-types.js';
import { DomainError } from '../errors.js';
import { moveWake } from '../publishing/wake.js';
import { withOwnedPost } from './owned-post.js';
import { loadPostDetail } from './post-detail.js';
import { refuseChangeOfSentPost } from './post-rules.js';

/** Publishes a draft or scheduled post now: due at once, and a worker woken for it in the same transaction. */
export async function publishPostNow(db: Kysely<Database>, queue: PublicationQueue, userId: string, postId: string, now: Date): Promise<PostDetail> {
  return withOwnedPost(db, userId, postId, async (trx, post) => {
    refuseChangeOfSentPost(post, await selectTargetsOfPost(trx, postId), 'publish');
    // Status publishing, not scheduled: a post published on demand is never judged late.
    const values = { status: 'publishing' as const, scheduled_at: now, updated_at: now, ...(await moveWake(trx, queue, post, now)) };
    await updatePost(trx, postId, values);
    return loadPostDetail(trx, { ...post, ...values });
  });
}

/**
 * Re-runs the failed targets of a post (and, when a person says so, those whose outcome is
 * unknown) with a fresh budget of automatic retries. Published targets are never touched.
 */
export async function retryPost(
  db: Kysely<Database>,
  queue: PublicationQueue,
  userId: string,
  postId: string,
  includeUnknown: boolean,
  now: Date,
): Promise<PostDetail> {
  return withOwnedPost(db, userId, postId, async (trx, post) => {
    const targets = await selectTargetsOfPost(trx, postId);
    const retried = targets.filter((t) => t.state === 'failed' || (includeUnknown && t.state === 'unknown'));
    if (retried.length === 0) {
      if (targets.some((t) => t.state === 'unknown')) {
        throw new DomainError(
          'not_allowed',
          'Nothing to retry without includeUnknown=true: the remaining targets may already be published; check the platform first',
        );
      }
      throw new DomainError('not_allowed', 'Nothing to retry: no target has failed');
    }
    for (const target of retried) {
      await updateTarget(trx, postId, target.account_id, {
        state: 'pending',
        attempts_before_retry: target.attempts,
        next_attempt_at: null,
        error_category: null,
        error_message: null,
        // A person checked the platform and found nothing: the next attempt is a fresh one, no longer in doubt.
        ...(target.state === 'unknown' ? { in_doubt: false, first_attempt_at: null } : {}),
      });
    }
    const values = { status: 'publishing' as const, updated_at: now, ...(await moveWake(trx, queue, post, now)) };
    await updatePost(trx, postId, values);
    return loadPostDetail(trx, { ...post, ...values });
  });
}
