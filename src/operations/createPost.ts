import { defaulted, type OperationHandler } from '../contract/handler-types.js';
import { createPost } from '../domain/posts/create-post.js';
import { callerOf } from '../operations-kit/caller.js';
import type { OperationContext } from '../operations-kit/context.js';

export function createPostHandler(ctx: OperationContext): OperationHandler<'createPost'> {
  return async (req, reply) => {
    const input = { ...req.body, postType: defaulted(req.body.postType, 'postType') };
    const result = await createPost(ctx.db(), ctx.publishing().queue, callerOf(req).userId, input, ctx.now());
    reply.code(201);
    return result;
  };
}
