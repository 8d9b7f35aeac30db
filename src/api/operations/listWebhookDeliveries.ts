import { defaulted, type OperationHandler } from '../contract/handler-types.js';
import { listWebhookDeliveries } from '../../domain/webhooks/endpoints.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';

export function listWebhookDeliveriesHandler(ctx: OperationContext): OperationHandler<'listWebhookDeliveries'> {
  return async (req) =>
    listWebhookDeliveries(ctx.db(), callerOf(req).userId, req.params.id, defaulted(req.query.limit, 'limit'), defaulted(req.query.offset, 'offset'));
}
