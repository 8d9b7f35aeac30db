import { createHash, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { INVALID_REQUEST } from '../domain/errors.js';
import { claimIdempotencyKey, completeIdempotencyKey, IDEMPOTENCY_LOCK_MS, releaseIdempotencyKey, type IdempotencyScope } from '../domain/idempotency.js';
import type { OperationContext } from './kit/context.js';
import { callerOf } from './kit/caller.js';
import './kit/idempotency.js';
import { HttpError } from './http-error.js';
import { asList } from './route-options.js';

const HEADER = 'idempotency-key';
const KEY_REUSED = 'Idempotency-Key reused with a different request: use a new key for a new request';
const IN_PROGRESS = 'A request with this Idempotency-Key is still in progress';

type Hook = NonNullable<RouteOptions['preHandler']>;

/**
 * Gives every operation whose spec takes an `Idempotency-Key` header its replay semantics: the key
 * is claimed after authentication and validation (an upload's once its form is read; a refused
 * request never holds a key), the answer is kept when it is sent, and a 5xx or a `400 Invalid
 * request` frees the key so that a retry does the work.
 */
export function installIdempotency(app: FastifyInstance, context: OperationContext): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const headers = (route.schema?.headers as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
    if (!Object.keys(headers).some((name) => name.toLowerCase() === HEADER)) return;
    const operationId = (route.schema as { operationId?: string }).operationId ?? route.url;
    // An upload is read by its operation as it streams and known only then: the operation claims the key.
    const streamed = route.config?.acceptedContentTypes?.includes('multipart/form-data') ?? false;
    route.preHandler = [...asList(route.preHandler), claimKey(context, operationId, streamed)] as Hook;
    route.onSend = [...asList(route.onSend), keepAnswer(context)] as RouteOptions['onSend'];
  });
}

/**
 * The kept answer to the same request, given again. A claim an operation makes once it has read its
 * body throws it, to end the operation; the error handler sends it as it was kept.
 */
export class KeptAnswer extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: string,
  ) {
    super('the kept answer of the same request');
    this.name = 'KeptAnswer';
  }
}

export function sendKeptAnswer(reply: FastifyReply, answer: KeptAnswer): FastifyReply {
  return reply.code(answer.statusCode).header('idempotency-replayed', 'true').type('application/json; charset=utf-8').send(answer.body);
}

function claimKey(context: OperationContext, operationId: string, streamed: boolean) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const key = req.headers[HEADER];
    if (typeof key !== 'string') return;
    const scope = { userId: callerOf(req).userId, operationId, key };
    if (streamed) {
      req.claimKeyForBody = async (received) => {
        const kept = await takeKey(context, req, scope, received);
        if (kept !== undefined) throw kept;
      };
      return;
    }
    const kept = await takeKey(context, req, scope, req.body);
    if (kept !== undefined) await sendKeptAnswer(reply, kept);
  };
}

/** Takes the key for this request, or returns the kept answer of the same request; throws the 409 and 422. */
async function takeKey(context: OperationContext, req: FastifyRequest, scope: IdempotencyScope, body: unknown): Promise<KeptAnswer | undefined> {
  const claim = randomUUID();
  let answer;
  try {
    answer = await claimIdempotencyKey(context.db(), scope, claim, fingerprint(req, body), context.now(), context.deps().vault);
  } catch (err) {
    // The claim may have been written before the database went away: free it once it is back,
    // or the key would stay locked and the client's retry refused until the lock ran out.
    void keepLater(() => releaseIdempotencyKey(context.db(), scope, claim), req);
    throw err;
  }
  switch (answer.kind) {
    case 'claimed':
      req.idempotency = { scope, claim };
      return undefined;
    case 'replay':
      return new KeptAnswer(answer.statusCode, answer.body);
    case 'in_progress':
      throw new HttpError(409, IN_PROGRESS, answer.retryAfterSeconds);
    case 'mismatch':
      throw new HttpError(422, KEY_REUSED);
  }
}

function keepAnswer(context: OperationContext) {
  return async (req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
    const held = req.idempotency;
    if (held === undefined) return payload;
    req.idempotency = undefined;
    const { scope, claim } = held;
    const keep =
      typeof payload !== 'string' || keepsNoKey(reply.statusCode, payload)
        ? () => releaseIdempotencyKey(context.db(), scope, claim)
        : () => completeIdempotencyKey(context.db(), scope, claim, reply.statusCode, payload, held.sealed ? context.deps().vault : undefined);
    try {
      await keep();
    } catch {
      // The work is done and answered; the database went away just after. Until the answer is kept,
      // the key stays locked (a retry gets 409), so keep trying within the lock rather than let a
      // retry take the key over and do the work again.
      void keepLater(keep, req);
    }
    return payload;
  };
}

/**
 * Answers the spec keeps no key for: a 5xx, and a request refused before its work began (`400
 * Invalid request`, which an operation's own cross-field rules also answer after the claim).
 */
function keepsNoKey(statusCode: number, payload: string): boolean {
  return statusCode >= 500 || (statusCode === 400 && (JSON.parse(payload) as { error?: unknown }).error === INVALID_REQUEST);
}

/** How often, and until when, a kept answer that could not be written is tried again. */
const KEEP_RETRY_MS = 1000;
const KEEP_RETRY_FOR_MS = IDEMPOTENCY_LOCK_MS - 10_000;

async function keepLater(keep: () => Promise<void>, req: FastifyRequest): Promise<void> {
  req.log.warn('database not available to keep an Idempotency-Key; retrying in the background');
  for (const until = Date.now() + KEEP_RETRY_FOR_MS; Date.now() < until;) {
    await new Promise((resolve) => setTimeout(resolve, KEEP_RETRY_MS).unref());
    try {
      await keep();
      return;
    } catch {
      // Still unavailable; the loop is bounded by the key's lock.
    }
  }
  req.log.error('gave up keeping an Idempotency-Key answer: a retry after its lock may repeat the work');
}

/**
 * What makes two requests the same: the path, the query, and the body as parsed (JSON key order
 * and spacing do not count) or, for a streamed body, what its operation received.
 */
function fingerprint(req: FastifyRequest, body: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify({ path: req.url.split('?')[0], query: req.query, body: canonical(body) }))
    .digest('base64url');
}

/** The value with object keys sorted, so equal JSON values serialise alike. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
  );
}
