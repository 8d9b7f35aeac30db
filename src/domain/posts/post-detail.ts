import type { Kysely } from 'kysely';
import { selectPostContents, type PostContents, type PostViewRow, type TargetWithAccount } from '../../db/queries/posts.js';
import type { Database } from '../../db/schema.js';
import type { PostDetail, PostTarget } from '../api-types.js';
import type { ErrorCategory } from '../ports/publisher.js';
import { toPostView } from './post-view.js';

/** A post with its media and targets, as getPost shows it. */
export async function loadPostDetail(db: Kysely<Database>, post: PostViewRow): Promise<PostDetail> {
  return toPostDetail(post, await selectPostContents(db, post.id));
}

export function toPostDetail(post: PostViewRow, { targets, mediaIds }: PostContents): PostDetail {
  return { ...toPostView(post), mediaIds, targets: targets.map((t) => toTargetView(post, t)) };
}

function toTargetView(post: PostViewRow, t: TargetWithAccount): PostTarget {
  const settledWithError = (t.state === 'failed' || t.state === 'unknown') && t.error_category !== null;
  return {
    accountId: t.account_id,
    platform: t.platform,
    username: t.username,
    caption: t.caption_override ?? post.caption,
    fields: t.fields,
    threadParts: t.thread_parts,
    status: t.state,
    platformPostId: t.platform_post_id,
    url: t.url,
    publishedAt: t.published_at?.toISOString() ?? null,
    error: settledWithError
      ? {
          message: t.error_message ?? '',
          category: t.error_category as ErrorCategory,
          retrying: t.state === 'failed' && t.next_attempt_at !== null,
          attempts: t.attempts,
          nextAttemptAt: t.state === 'failed' ? (t.next_attempt_at?.toISOString() ?? null) : null,
        }
      : null,
  };
}
