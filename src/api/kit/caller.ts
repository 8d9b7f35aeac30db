import type { FastifyRequest } from 'fastify';
import type { Caller } from '../../domain/api-keys.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the bearerAuth security handler before any operation runs. */
    caller?: Caller;
  }
}

export function callerOf(req: FastifyRequest): Caller {
  if (!req.caller) throw new Error('Operation reached without an authenticated caller');
  return req.caller;
}
