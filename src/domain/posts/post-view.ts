import type { PostViewRow } from '../../db/queries/posts.js';
import type { Post, PostType } from '../api-types.js';

/** A stored post as the API shows it: UTC timestamps with milliseconds, null scheduledAt on drafts. */
export function toPostView(row: PostViewRow): Post {
  return {
    id: row.id,
    userId: row.user_id,
    caption: row.caption,
    firstComment: row.first_comment,
    postType: row.post_type as PostType,
    status: row.status,
    scheduledAt: row.status === 'draft' ? null : (row.scheduled_at?.toISOString() ?? null),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
