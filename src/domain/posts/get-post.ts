import type { Kysely } from 'kysely';
import { selectPostWithContentsOwnedBy } from '../../db/queries/posts.js';
import type { Database } from '../../db/schema.js';
import type { PostDetail } from '../api-types.js';
import { DomainError } from '../errors.js';
import { isWellFormedId } from '../ids.js';
import { POST_NOT_FOUND } from './owned-post.js';
import { toPostDetail } from './post-detail.js';

export async function getPost(db: Kysely<Database>, userId: string, postId: string): Promise<PostDetail> {
  const found = isWellFormedId('post', postId) ? await selectPostWithContentsOwnedBy(db, postId, userId) : undefined;
  if (found === undefined) throw new DomainError('not_found', POST_NOT_FOUND);
  return toPostDetail(found.post, found.contents);
}
