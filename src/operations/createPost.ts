import { createPost } from '../domain/posts/create-post.js';
import { callerOf } from './caller.js';
import type { OperationContext } from './context.js';
import type { OperationHandler } from './handler-types.js';

export function createPostHandler(ctx: OperationContext): OperationHandler<'createPost'> {
  return async (req, reply) => {
    const result = await createPost(ctx.db(), callerOf(req).userId, req.body, ctx.now());
    reply.code(201);
    return result;
  };
}
