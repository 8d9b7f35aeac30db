import type { OperationHandler } from '../contract/handler-types.js';
import { disconnectAccountOf } from '../../domain/accounts.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';

export function disconnectAccountHandler(ctx: OperationContext): OperationHandler<'disconnectAccount'> {
  return async (req) => {
    await disconnectAccountOf(ctx.db(), callerOf(req).userId, req.params.id, ctx.now());
    return { success: true };
  };
}
