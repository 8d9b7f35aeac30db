import { defaulted, type OperationHandler } from '../contract/handler-types.js';
import { listPosts } from '../domain/posts/list-posts.js';
import { callerOf } from '../operations-kit/caller.js';
import type { OperationContext } from '../operations-kit/context.js';

export function listPostsHandler(ctx: OperationContext): OperationHandler<'listPosts'> {
  return async (req) =>
    listPosts(ctx.db(), callerOf(req).userId, defaulted(req.query.limit, 'limit'), defaulted(req.query.offset, 'offset'), req.query.status);
}
