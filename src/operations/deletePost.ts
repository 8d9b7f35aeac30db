import { deletePost } from '../domain/posts/delete-post.js';
import { callerOf } from './caller.js';
import type { OperationContext } from './context.js';
import type { OperationHandler } from './handler-types.js';

export function deletePostHandler(ctx: OperationContext): OperationHandler<'deletePost'> {
  return async (req) => {
    await deletePost(ctx.db(), callerOf(req).userId, req.params.id);
    return { success: true };
  };
}
