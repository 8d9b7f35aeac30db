import type { Kysely } from 'kysely';
import { selectPostOwnedBy } from '../../data/queries/posts.js';
import type { Database } from '../../data/schema.js';
import type { PostDetail } from '../api-types.js';
import { DomainError } from '../errors.js';
import { isWellFormedId } from '../ids.js';
import { POST_NOT_FOUND } from './owned-post.js';
import { loadPostDetail } from './post-detail.js';

export async function getPost(db: Kysely<Database>, userId: string, postId: string): Promise<PostDetail> {
  const post = isWellFormedId('post', postId) ? await selectPostOwnedBy(db, postId, userId) : undefined;
  if (post === undefined) throw new DomainError('not_found', POST_NOT_FOUND);
  return loadPostDetail(db, post);
}
