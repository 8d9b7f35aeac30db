import type { OperationHandler } from '../contract/handler-types.js';
import { getConnection } from '../../domain/connections.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';

export function getConnectionHandler(ctx: OperationContext): OperationHandler<'getConnection'> {
  return async (req) => getConnection(ctx.deps(), callerOf(req).userId, req.params.id, ctx.now());
}
