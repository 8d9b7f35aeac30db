import type { PostRow } from '../../db/queries/posts.js';
import type { TargetRow } from '../../db/queries/publishing.js';
import { DomainError } from '../errors.js';

/**
 * A post that reached a platform stays as it is: what was published cannot be unsaid by editing
 * or deleting it here. A post is also left alone while a worker is calling a platform for it.
 */
export function refuseDeleteOfSentPost(targets: readonly TargetRow[]): void {
  if (targets.some((t) => t.state === 'published')) throw new DomainError('not_allowed', 'Cannot delete published post', undefined, 'post_published');
  if (targets.some((t) => t.state === 'publishing'))
    throw new DomainError('not_allowed', 'Cannot delete a post while it is publishing', undefined, 'post_publishing');
}

/** Only drafts and scheduled posts can be edited (or published on demand); the message says what to do instead. */
export function refuseChangeOfSentPost(post: PostRow, targets: readonly TargetRow[], action: 'edit' | 'publish'): void {
  if (post.status === 'draft' || post.status === 'scheduled') return;
  if (action === 'publish') {
    if (post.status === 'publishing') throw new DomainError('not_allowed', 'Post is already publishing', undefined, 'post_publishing');
    throw new DomainError('not_allowed', 'Post has already been published or has failed; use retry for failed targets', undefined, 'post_settled');
  }
  if (targets.some((t) => t.state === 'published')) throw new DomainError('not_allowed', 'Cannot edit published post', undefined, 'post_published');
  if (post.status === 'publishing') throw new DomainError('not_allowed', 'Cannot edit a post while it is publishing', undefined, 'post_publishing');
  throw new DomainError('not_allowed', 'Cannot edit a failed post: retry it, or delete it and create a new one', undefined, 'post_settled');
}
