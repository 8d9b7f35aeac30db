import type { OperationHandler } from '../contract/handler-types.js';
import { getWebhook } from '../../domain/webhooks/endpoints.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';

export function getWebhookHandler(ctx: OperationContext): OperationHandler<'getWebhook'> {
  return async (req) => getWebhook(ctx.db(), callerOf(req).userId, req.params.id, ctx.now());
}
