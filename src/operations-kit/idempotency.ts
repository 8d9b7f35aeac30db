import type { FastifyRequest } from 'fastify';
import type { IdempotencyScope } from '../domain/idempotency.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The Idempotency-Key this request holds, and its claim, to complete or release when it is answered. */
    idempotency?: HeldKey;
  }
}

export interface HeldKey {
  scope: IdempotencyScope;
  claim: string;
}

/** The Idempotency-Key the request holds (set by the HTTP layer once it has claimed it), if any. */
export function heldIdempotencyKey(req: FastifyRequest): HeldKey | undefined {
  return req.idempotency;
}
