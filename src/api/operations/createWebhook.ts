import type { OperationHandler } from '../contract/handler-types.js';
import { createWebhook } from '../../domain/webhooks/endpoints.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';
import { keepAnswerSealed } from '../kit/idempotency.js';

export function createWebhookHandler(ctx: OperationContext): OperationHandler<'createWebhook'> {
  return async (req, reply) => {
    // The answer carries the endpoint's signing secret.
    keepAnswerSealed(req);
    const webhook = await createWebhook(ctx.deps(), callerOf(req).userId, req.body, ctx.now());
    reply.code(201);
    return webhook;
  };
}
