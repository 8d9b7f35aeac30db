import type { OperationHandler } from '../contract/handler-types.js';
import { checkReadiness } from '../../domain/health.js';
import type { OperationContext } from '../kit/context.js';

/** Seconds a load balancer should wait before asking again after a 503. */
const RETRY_AFTER_SECONDS = 5;

export function getReadinessHandler(ctx: OperationContext): OperationHandler<'getReadiness'> {
  return async (_req, reply) => {
    const readiness = await checkReadiness(ctx.openDatabase());
    if (!readiness.ready) reply.code(503).header('retry-after', RETRY_AFTER_SECONDS);
    return readiness;
  };
}
