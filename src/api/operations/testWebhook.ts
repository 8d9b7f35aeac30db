import type { OperationHandler } from '../contract/handler-types.js';
import { testWebhook } from '../../domain/webhooks/endpoints.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';

export function testWebhookHandler(ctx: OperationContext): OperationHandler<'testWebhook'> {
  return async (req, reply) => {
    const event = await testWebhook(ctx.db(), callerOf(req).userId, req.params.id, ctx.now());
    reply.code(202);
    return event;
  };
}
