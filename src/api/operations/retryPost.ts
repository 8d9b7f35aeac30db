import { defaulted, type OperationHandler } from '../contract/handler-types.js';
import { retryPost } from '../../domain/posts/publish-post.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';

export function retryPostHandler(ctx: OperationContext): OperationHandler<'retryPost'> {
  return async (req, reply) => {
    const includeUnknown = defaulted(req.query.includeUnknown, 'includeUnknown');
    const result = await retryPost(ctx.db(), callerOf(req).userId, req.params.id, includeUnknown, ctx.now());
    reply.code(202);
    return result;
  };
}
