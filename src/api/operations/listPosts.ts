import { defaulted, type OperationHandler } from '../contract/handler-types.js';
import { listPosts } from '../../domain/posts/list-posts.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';

export function listPostsHandler(ctx: OperationContext): OperationHandler<'listPosts'> {
  return async (req) =>
    listPosts(ctx.db(), callerOf(req).userId, {
      limit: defaulted(req.query.limit, 'limit'),
      offset: defaulted(req.query.offset, 'offset'),
      ...(req.query.status === undefined ? {} : { status: req.query.status }),
      ...(req.query.cursor === undefined ? {} : { cursor: req.query.cursor }),
    });
}
