import type { OperationHandler } from '../contract/handler-types.js';
import { startConnection } from '../../domain/connections.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';

export function startConnectionHandler(ctx: OperationContext): OperationHandler<'startConnection'> {
  return async (req, reply) => {
    const connection = await startConnection(ctx.deps(), callerOf(req).userId, req.body, ctx.now());
    reply.code(201);
    return connection;
  };
}
