import type { Kysely } from 'kysely';
import { selectPostsPage } from '../../db/queries/posts.js';
import type { Database } from '../../db/schema.js';
import type { PostList, PostStatus } from '../api-types.js';
import { invalidRequest } from '../errors.js';
import { decodePostCursor, encodePostCursor } from './post-cursor.js';
import { toPostView } from './post-view.js';

export interface ListPostsQuery {
  limit: number;
  offset: number;
  status?: PostStatus;
  /** A nextCursor from an earlier page: the page starts after it, however deep. */
  cursor?: string;
}

/** One page of the caller's posts, and a cursor to the next when there is one (one row more is read to know). */
export async function listPosts(db: Kysely<Database>, userId: string, { limit, offset, status, cursor }: ListPostsQuery): Promise<PostList> {
  if (cursor !== undefined && offset !== 0) {
    throw invalidRequest([
      {
        code: 'invalid_combination',
        expected: 'offset 0 with a cursor',
        received: String(offset),
        path: ['offset'],
        message: 'Send either offset or cursor, not both',
      },
    ]);
  }
  const after = cursor === undefined ? undefined : decodePostCursor(cursor);
  const rows = await selectPostsPage(db, userId, {
    limit: limit + 1,
    offset,
    ...(status === undefined ? {} : { status }),
    ...(after === undefined ? {} : { after: { id: after.id, createdAtCeiling: new Date(after.createdAt.getTime() + 1) } }),
  });
  const page = rows.length > limit ? rows.slice(0, limit) : rows;
  const last = page.at(-1);
  return {
    data: page.map(toPostView),
    limit,
    offset,
    nextCursor: rows.length > limit && last !== undefined ? encodePostCursor({ id: last.id, createdAt: last.created_at }) : null,
  };
}
