import type { OperationHandler } from '../contract/handler-types.js';
import { createWebhook } from '../../domain/webhooks/endpoints.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';
import { keepAnswerSealed, keepWithWork } from '../kit/idempotency.js';

const CREATED = 201;

export function createWebhookHandler(ctx: OperationContext): OperationHandler<'createWebhook'> {
  return async (req, reply) => {
    // The answer carries the endpoint's signing secret.
    keepAnswerSealed(req);
    const webhook = await createWebhook(ctx.deps(), callerOf(req).userId, req.body, ctx.now(), keepWithWork(req, ctx.deps().vault, CREATED));
    reply.code(CREATED);
    return webhook;
  };
}
