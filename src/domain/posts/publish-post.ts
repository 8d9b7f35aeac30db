import type { Kysely } from 'kysely';
import type { PostRow } from '../../db/queries/posts.js';
import { selectAccountsByIds, selectTargetsOfPost, updatePost, updateTarget, type TargetRow } from '../../db/queries/publishing.js';
import type { Database } from '../../db/schema.js';
import type { PostDetail } from '../api-types.js';
import { DomainError } from '../errors.js';
import { accountsOutOfReach } from '../publishing/reach.js';
import { summarisePostStatus } from '../publishing/status.js';
import { OWNER_LOST_ACCESS, settleFailed, standing } from '../publishing/target-machine.js';
import { emitPublishingEvents, type PublishingChange } from '../webhooks/events.js';
import { withOwnedPost } from './owned-post.js';
import { loadPostDetail } from './post-detail.js';
import { refuseChangeOfSentPost } from './post-rules.js';

/**
 * Publishes a draft or scheduled post now: due at once, announced to the workers as it commits. Targets whose account the caller no longer reaches fail at once.
 */
export async function publishPostNow(db: Kysely<Database>, userId: string, postId: string, now: Date): Promise<PostDetail> {
  return withOwnedPost(db, userId, postId, async (trx, post) => {
    const targets = await selectTargetsOfPost(trx, postId);
    refuseChangeOfSentPost(post, targets, 'publish');
    const settled = await failTargetsOutOfReach(trx, post, targets);
    // Status publishing, not scheduled: a post published on demand is never judged late.
    return goOut(trx, post, targets, { scheduled_at: now }, { previousStatus: post.status, settledTargets: settled }, now);
  });
}

/**
 * Re-runs the failed targets of a post (and, when a person says so, those whose outcome is
 * unknown) with a fresh budget of automatic retries. Published targets are never touched.
 */
export async function retryPost(db: Kysely<Database>, userId: string, postId: string, includeUnknown: boolean, now: Date): Promise<PostDetail> {
  return withOwnedPost(db, userId, postId, async (trx, post) => {
    const targets = await selectTargetsOfPost(trx, postId);
    const retried = targets.filter((t) => t.state === 'failed' || (includeUnknown && t.state === 'unknown'));
    if (retried.length === 0) {
      if (targets.some((t) => t.state === 'unknown')) {
        throw new DomainError(
          'not_allowed',
          'Nothing to retry without includeUnknown=true: the remaining targets may already be published; check the platform first',
          undefined,
          'nothing_to_retry',
        );
      }
      throw new DomainError('not_allowed', 'Nothing to retry: no target has failed', undefined, 'nothing_to_retry');
    }
    for (const target of retried) {
      const values = {
        state: 'pending' as const,
        attempts_before_retry: target.attempts,
        next_attempt_at: null,
        error_category: null,
        error_message: null,
        // A person checked the platform and found nothing: the next attempt is a fresh one, no longer in doubt.
        ...(target.state === 'unknown' ? { in_doubt: false, first_attempt_at: null } : {}),
      };
      await updateTarget(trx, postId, target.account_id, values);
      Object.assign(target, values);
    }
    const settled = await failTargetsOutOfReach(trx, post, retried);
    // The retry puts the post back to publishing: if it settles at once, its event is raised again, as after any retry.
    return goOut(trx, post, targets, {}, { previousStatus: 'publishing', settledTargets: settled }, now);
  });
}

/**
 * Fails, as a worker's claim would, those of `targets` whose account the post's owner no longer
 * reaches (they left its organization): nothing is published there, and the answer says why at
 * once. Returns them, for their events.
 */
async function failTargetsOutOfReach(trx: Kysely<Database>, post: PostRow, targets: TargetRow[]): Promise<PublishingChange['settledTargets']> {
  const outOfReach = await accountsOutOfReach(
    trx,
    post.user_id,
    await selectAccountsByIds(
      trx,
      targets.map((t) => t.account_id),
    ),
  );
  const settled: PublishingChange['settledTargets'] = [];
  for (const target of targets.filter((t) => outOfReach.has(t.account_id))) {
    const failed = settleFailed('auth_expired', OWNER_LOST_ACCESS);
    await updateTarget(trx, post.id, target.account_id, failed);
    Object.assign(target, failed);
    settled.push({ accountId: target.account_id, type: 'target.failed' });
  }
  return settled;
}

/**
 * Writes the post's status as its targets now stand, due at once while any of them is to be
 * published, and raises the events of the targets that settled here.
 */
async function goOut(
  trx: Kysely<Database>,
  post: PostRow,
  targets: readonly TargetRow[],
  change: Partial<PostRow>,
  events: Pick<PublishingChange, 'previousStatus' | 'settledTargets'>,
  now: Date,
): Promise<PostDetail> {
  const status = summarisePostStatus(targets.map(standing));
  const values = { ...change, status, updated_at: now, next_check_at: status === 'publishing' ? now : null };
  await updatePost(trx, post.id, values);
  const updated = { ...post, ...values };
  await emitPublishingEvents(trx, { post: updated, ...events, needsReconnect: [] }, now);
  return loadPostDetail(trx, updated);
}
