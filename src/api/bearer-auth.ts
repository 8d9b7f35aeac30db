import type { FastifyRequest } from 'fastify';
import { authenticate } from '../domain/api-keys.js';
import './kit/caller.js';
import type { OperationContext } from './kit/context.js';

/** The bearer credential in an Authorization header, or undefined when there is none. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = authorization?.match(/^Bearer[ \t]+(\S+)[ \t]*$/i);
  return match?.[1];
}

/** glue's securityHandlers, keyed by the spec's security scheme names. */
export function createSecurityHandlers(ctx: OperationContext) {
  return {
    async bearerAuth(req: FastifyRequest): Promise<void> {
      req.caller = await authenticate(ctx.db(), bearerToken(req.headers.authorization), ctx.now(), ctx.apiKeyCache());
    },
  };
}
