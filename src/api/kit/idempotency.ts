import type { FastifyRequest } from 'fastify';
import { completeIdempotencyKey, type IdempotencyScope, type KeepWithWork } from '../../domain/idempotency.js';
import type { CredentialVault } from '../../domain/ports/secrets.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The Idempotency-Key this request holds, and its claim, to complete or release when it is answered. */
    idempotency?: HeldKey;
    /**
     * Set by the HTTP layer, instead of claiming the key, on a request whose operation reads its body
     * as it streams (an upload): claims the key once that body is read. See claimIdempotencyKeyForBody.
     */
    claimKeyForBody?: (received: unknown) => Promise<void>;
  }
}

export interface HeldKey {
  scope: IdempotencyScope;
  claim: string;
  /** The answer carries a secret: it is kept only sealed. */
  sealed?: boolean;
}

/** The Idempotency-Key the request holds (set by the HTTP layer once it has claimed it), if any. */
export function heldIdempotencyKey(req: FastifyRequest): HeldKey | undefined {
  return req.idempotency;
}

/** Says that the answer carries a secret, so that it is kept for retries only sealed. */
export function keepAnswerSealed(req: FastifyRequest): void {
  if (req.idempotency !== undefined) req.idempotency.sealed = true;
}

/**
 * For an operation that reads its body as it streams: claims the request's Idempotency-Key, if it
 * sent one, now that the body is read. `received` stands for the body in what makes two requests
 * the same (for an upload, a hash of the file's bytes and its other fields). Throws as the claim
 * before other operations answers: the kept answer of the same request, a 409 or a 422.
 */
export async function claimIdempotencyKeyForBody(req: FastifyRequest, received: unknown): Promise<void> {
  await req.claimKeyForBody?.(received);
}

/**
 * For an operation whose work is one transaction: keeps its answer (`statusCode`, the answer as
 * JSON, sealed where the answer carries a secret) for the request's Idempotency-Key inside that
 * transaction. Undefined when the request holds no key.
 */
export function keepWithWork<T>(req: FastifyRequest, vault: CredentialVault, statusCode: number): KeepWithWork<T> | undefined {
  const held = req.idempotency;
  if (held === undefined) return undefined;
  return (trx, answer) => completeIdempotencyKey(trx, held.scope, held.claim, statusCode, JSON.stringify(answer), held.sealed === true ? vault : undefined);
}
