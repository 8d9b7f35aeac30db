import type { OperationHandler } from '../contract/handler-types.js';
import { connectAccountFor } from '../../domain/live-accounts.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';
import { keepWithWork } from '../kit/idempotency.js';

const CREATED = 201;

export function connectAccountHandler(ctx: OperationContext): OperationHandler<'connectAccount'> {
  return async (req, reply) => {
    const { account } = await connectAccountFor(ctx.deps(), { userId: callerOf(req).userId }, req.body, keepWithWork(req, ctx.deps().vault, CREATED));
    reply.code(CREATED);
    return account;
  };
}
