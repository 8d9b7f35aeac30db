import type { Kysely } from 'kysely';
import { selectPostsPage } from '../../data/queries/posts.js';
import type { Database } from '../../data/schema.js';
import type { PostList, PostStatus } from '../api-types.js';
import { toPostView } from './post-view.js';

export async function listPosts(db: Kysely<Database>, userId: string, limit: number, offset: number, status?: PostStatus): Promise<PostList> {
  const rows = await selectPostsPage(db, userId, limit, offset, status);
  return { data: rows.map(toPostView), limit, offset };
}
