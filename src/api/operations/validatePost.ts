import { defaulted, type OperationHandler } from '../contract/handler-types.js';
import { validatePost } from '../../domain/posts/validate-post.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';

export function validatePostHandler(ctx: OperationContext): OperationHandler<'validatePost'> {
  return async (req) => validatePost(ctx.db(), callerOf(req).userId, { ...req.body, postType: defaulted(req.body.postType, 'postType') }, ctx.now());
}
