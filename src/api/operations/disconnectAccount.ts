import type { OperationHandler } from '../contract/handler-types.js';
import { disconnectAccountOf } from '../../domain/accounts.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';

export function disconnectAccountHandler(ctx: OperationContext): OperationHandler<'disconnectAccount'> {
  return async (req) => {
    // The platform is told afterwards: its answer never holds up the disconnect.
    void (await disconnectAccountOf(ctx.deps(), callerOf(req).userId, req.params.id, ctx.now())).revoked;
    return { success: true };
  };
}
