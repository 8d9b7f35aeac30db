import type { OperationHandler } from '../contract/handler-types.js';
import { publishPostNow } from '../../domain/posts/publish-post.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';

export function publishPostHandler(ctx: OperationContext): OperationHandler<'publishPost'> {
  return async (req, reply) => {
    const result = await publishPostNow(ctx.db(), callerOf(req).userId, req.params.id, ctx.now());
    reply.code(202);
    return result;
  };
}
