import { defaulted, type OperationHandler } from '../contract/handler-types.js';
import { createPost } from '../../domain/posts/create-post.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';
import { keepWithWork } from '../kit/idempotency.js';

const CREATED = 201;

export function createPostHandler(ctx: OperationContext): OperationHandler<'createPost'> {
  return async (req, reply) => {
    const input = { ...req.body, postType: defaulted(req.body.postType, 'postType') };
    const result = await createPost(ctx.db(), callerOf(req).userId, input, ctx.now(), keepWithWork(req, ctx.deps().vault, CREATED));
    reply.code(CREATED);
    return result;
  };
}
