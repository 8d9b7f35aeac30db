import { createPost } from '../domain/posts/create-post.js';
import { callerOf } from './caller.js';
import type { OperationContext } from './context.js';
import { defaulted, type OperationHandler } from './handler-types.js';

export function createPostHandler(ctx: OperationContext): OperationHandler<'createPost'> {
  return async (req, reply) => {
    const input = { ...req.body, postType: defaulted(req.body.postType, 'postType') };
    const result = await createPost(ctx.db(), callerOf(req).userId, input, ctx.now());
    reply.code(201);
    return result;
  };
}
