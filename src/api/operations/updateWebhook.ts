import type { OperationHandler } from '../contract/handler-types.js';
import { updateWebhook } from '../../domain/webhooks/endpoints.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';

export function updateWebhookHandler(ctx: OperationContext): OperationHandler<'updateWebhook'> {
  return async (req) => updateWebhook(ctx.deps(), callerOf(req).userId, req.params.id, req.body, ctx.now());
}
