import type { OperationHandler } from '../contract/handler-types.js';
import { updatePost } from '../../domain/posts/update-post.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';

export function updatePostHandler(ctx: OperationContext): OperationHandler<'updatePost'> {
  return async (req) => updatePost(ctx.db(), callerOf(req).userId, req.params.id, req.body, ctx.now());
}
