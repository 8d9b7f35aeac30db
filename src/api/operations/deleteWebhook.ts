import type { OperationHandler } from '../contract/handler-types.js';
import { deleteWebhook } from '../../domain/webhooks/endpoints.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';

export function deleteWebhookHandler(ctx: OperationContext): OperationHandler<'deleteWebhook'> {
  return async (req) => {
    await deleteWebhook(ctx.db(), callerOf(req).userId, req.params.id);
    return { success: true };
  };
}
