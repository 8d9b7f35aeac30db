import type { OperationHandler } from '../contract/handler-types.js';
import { getPost } from '../../domain/posts/get-post.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';

export function getPostHandler(ctx: OperationContext): OperationHandler<'getPost'> {
  return async (req) => getPost(ctx.db(), callerOf(req).userId, req.params.id);
}
