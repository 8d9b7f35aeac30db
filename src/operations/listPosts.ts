import { listPosts } from '../domain/posts/list-posts.js';
import { callerOf } from './caller.js';
import type { OperationContext } from './context.js';
import { defaulted, type OperationHandler } from './handler-types.js';

export function listPostsHandler(ctx: OperationContext): OperationHandler<'listPosts'> {
  return async (req) =>
    listPosts(ctx.db(), callerOf(req).userId, defaulted(req.query.limit, 'limit'), defaulted(req.query.offset, 'offset'));
}
