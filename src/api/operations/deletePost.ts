import type { OperationHandler } from '../contract/handler-types.js';
import { deletePost } from '../../domain/posts/delete-post.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';

export function deletePostHandler(ctx: OperationContext): OperationHandler<'deletePost'> {
  return async (req) => {
    await deletePost(ctx.db(), callerOf(req).userId, req.params.id);
    return { success: true };
  };
}
