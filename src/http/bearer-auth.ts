import type { FastifyRequest } from 'fastify';
import { authenticate } from '../domain/api-keys.js';
import type { OperationContext } from '../operations/context.js';
import '../operations/caller.js';

/** glue's securityHandlers, keyed by the spec's security scheme names. */
export function createSecurityHandlers(ctx: OperationContext) {
  return {
    async bearerAuth(req: FastifyRequest): Promise<void> {
      req.caller = await authenticate(ctx.db(), req.headers.authorization, ctx.now());
    },
  };
}
