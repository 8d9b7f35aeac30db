import type { Kysely } from 'kysely';
import { replacePostContents, selectMediaIdsOfPost, selectPostOwnedByForUpdate, type PostRow } from '../../db/queries/posts.js';
import { selectTargetsOfPost, updatePost as updatePostRow, type TargetRow } from '../../db/queries/publishing.js';
import type { Database } from '../../db/schema.js';
import type { PostDetail, PostType, PostUpdateInput } from '../api-types.js';
import { checkPost, postContents, type ValidatedPostCreateInput } from './create-post.js';
import { withOwnedPost } from './owned-post.js';
import { loadPostDetail } from './post-detail.js';
import { refuseChangeOfSentPost } from './post-rules.js';

/**
 * Edits a draft or scheduled post: the post as it would be after the change goes through the
 * create checks, then replaces the stored one, and when a worker looks at it moves with its
 * schedule, all in one transaction. A field left out keeps its value.
 */
export async function updatePost(db: Kysely<Database>, userId: string, postId: string, change: PostUpdateInput, now: Date): Promise<PostDetail> {
  return withOwnedPost(db, userId, postId, async (trx, post) => {
    const targets = await selectTargetsOfPost(trx, postId);
    refuseChangeOfSentPost(post, targets, 'edit');

    const merged = mergeChange(post, targets, await selectMediaIdsOfPost(trx, postId), change);
    // A schedule the change does not touch is not judged again, even once it has passed.
    const { scheduledAt: _unchanged, ...unscheduled } = merged;
    await checkPost(trx, userId, change.scheduledAt === undefined ? unscheduled : merged, now);

    const scheduledAt = merged.scheduledAt === undefined ? null : new Date(merged.scheduledAt);
    await updatePostRow(trx, postId, {
      caption: merged.caption ?? null,
      first_comment: merged.firstComment ?? null,
      post_type: merged.postType,
      status: scheduledAt === null ? 'draft' : 'scheduled',
      scheduled_at: scheduledAt,
      updated_at: now,
      next_check_at: scheduledAt,
    });
    await replacePostContents(trx, postId, postContents(postId, merged));
    const updated = await selectPostOwnedByForUpdate(trx, postId, userId);
    if (!updated) throw new Error(`post ${postId} vanished inside its own transaction`);
    return loadPostDetail(trx, updated);
  });
}

/** The post as a create request, with the change laid over it. */
function mergeChange(post: PostRow, targets: readonly TargetRow[], mediaIds: string[], change: PostUpdateInput): ValidatedPostCreateInput {
  const current: ValidatedPostCreateInput = {
    accountIds: targets.map((t) => t.account_id),
    postType: post.post_type as PostType,
    mediaIds,
    accountOverrides: targets
      .filter((t) => t.caption_override !== null || t.fields !== null)
      .map((t) => ({ accountId: t.account_id, captionOverride: t.caption_override, ...(t.fields === null ? {} : { fields: t.fields as never }) })),
    threadParts: Object.fromEntries(targets.filter((t) => t.thread_parts !== null).map((t) => [t.account_id, t.thread_parts])),
  };
  if (post.caption !== null) current.caption = post.caption;
  if (post.first_comment !== null) current.firstComment = post.first_comment;
  const merged: ValidatedPostCreateInput = { ...current };
  if (change.accountIds !== undefined) {
    merged.accountIds = change.accountIds;
    // Overrides and thread parts of accounts no longer targeted go with them, unless the change restates them.
    const kept = new Set(change.accountIds);
    merged.accountOverrides = (current.accountOverrides ?? []).filter((o) => kept.has(o.accountId));
    merged.threadParts = Object.fromEntries(Object.entries(current.threadParts ?? {}).filter(([id]) => kept.has(id)));
  }
  if (change.caption !== undefined) setOrDelete(merged, 'caption', change.caption);
  if (change.firstComment !== undefined) setOrDelete(merged, 'firstComment', change.firstComment);
  if (change.postType !== undefined) merged.postType = change.postType;
  if (change.mediaIds !== undefined) merged.mediaIds = change.mediaIds;
  if (change.accountOverrides !== undefined) merged.accountOverrides = change.accountOverrides;
  if (change.threadParts !== undefined) merged.threadParts = change.threadParts ?? {};
  if (change.scheduledAt !== undefined) {
    if (change.scheduledAt !== null) merged.scheduledAt = change.scheduledAt;
  } else if (post.status === 'scheduled' && post.scheduled_at !== null) {
    merged.scheduledAt = post.scheduled_at.toISOString();
  }
  return merged;
}

function setOrDelete(input: ValidatedPostCreateInput, key: 'caption' | 'firstComment', value: string | null): void {
  if (value === null) delete input[key];
  else input[key] = value;
}
