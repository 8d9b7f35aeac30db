import { defaulted, type OperationHandler } from '../contract/handler-types.js';
import { listWebhooks } from '../../domain/webhooks/endpoints.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';

export function listWebhooksHandler(ctx: OperationContext): OperationHandler<'listWebhooks'> {
  return async (req) => listWebhooks(ctx.db(), callerOf(req).userId, defaulted(req.query.limit, 'limit'), defaulted(req.query.offset, 'offset'), ctx.now());
}
