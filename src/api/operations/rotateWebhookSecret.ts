import { defaulted, type OperationHandler } from '../contract/handler-types.js';
import { rotateWebhookSecret } from '../../domain/webhooks/endpoints.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';
import { keepAnswerSealed } from '../kit/idempotency.js';

export function rotateWebhookSecretHandler(ctx: OperationContext): OperationHandler<'rotateWebhookSecret'> {
  return async (req) => {
    // The answer carries the endpoint's new signing secret.
    keepAnswerSealed(req);
    const overlapSeconds = defaulted(req.query.overlapSeconds, 'overlapSeconds');
    return rotateWebhookSecret(ctx.deps(), callerOf(req).userId, req.params.id, overlapSeconds, ctx.now());
  };
}
