import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { Redis } from 'ioredis';
import { callerOf } from './kit/caller.js';
import { HttpError } from './http-error.js';
import { asList } from './route-options.js';

/** Requests allowed per one-minute window in each bucket. */
export interface RateLimits {
  /** Every request made with one API key. */
  perKeyPerMinute: number;
  /** Every POST, PATCH and DELETE made with one API key (uploads included). */
  writesPerKeyPerMinute: number;
  /**
   * Per client address, in two buckets of this size each: requests to public pages and unknown
   * paths, and failed key guesses (every 401). Neither ever refuses a request with a valid key.
   */
  perAddressPerMinute: number;
  /**
   * Per client address, the consent pages people's browsers open (operations marked
   * `x-rate-limit: consent`), in a bucket of their own: many people connecting from one office
   * address are not refused with the other public pages.
   */
  consentPerAddressPerMinute: number;
}

export const DEFAULT_RATE_LIMITS: RateLimits = { perKeyPerMinute: 600, writesPerKeyPerMinute: 120, perAddressPerMinute: 60, consentPerAddressPerMinute: 300 };

export interface RateLimitOptions {
  limits: RateLimits;
  /** Counts in this Redis, shared by every process; without it each process counts in memory. */
  redisUrl?: string | undefined;
}

/** How a route is limited, from its operation in the spec. */
type RouteLimit = 'caller' | 'address' | 'consent' | 'none';

declare module 'fastify' {
  interface FastifyContextConfig {
    heraldRateLimit?: RouteLimit;
  }
  interface FastifyRequest {
    /** Set when this request's failed key is over its address's guess bucket: seconds to wait. */
    heraldGuessesSpentFor?: number;
  }
}

interface BucketState {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

export const RATE_LIMIT_EXCEEDED = 'Rate limit exceeded';
const WINDOW_MS = 60_000;
const WRITE_METHODS = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

/**
 * Per-key and per-address limits through @fastify/rate-limit's own limiters, placed around
 * authentication: a caller with a valid key counts in its key's buckets only; public pages and
 * unknown paths count in their address's public bucket, refused once it is spent; every 401
 * counts in the address's guess bucket, and once that is spent a failed key is answered 429
 * rather than 401. So nobody at an address (behind a proxy: everybody) can lock a valid key out.
 * `routeLimits` maps each operationId to how it is limited (see `routeLimitsFromSpec`).
 */
export async function installRateLimits(app: FastifyInstance, options: RateLimitOptions, routeLimits: ReadonlyMap<string, RouteLimit>): Promise<UnroutedLimit> {
  const redis = options.redisUrl === undefined ? undefined : await connectRedis(app, options.redisUrl);
  await app.register(rateLimit, {
    global: false,
    timeWindow: WINDOW_MS,
    // A Redis that stops answering lifts the limits rather than refusing every request.
    skipOnError: true,
    nameSpace: 'herald-rate-limit:',
    ...(redis === undefined ? {} : { redis }),
  });
  const { limits } = options;
  const perKey = app.createRateLimit({ max: limits.perKeyPerMinute, keyGenerator: (req) => `key:${callerOf(req).keyId}` });
  const writes = app.createRateLimit({ max: limits.writesPerKeyPerMinute, keyGenerator: (req) => `write:${callerOf(req).keyId}` });
  const perAddress = app.createRateLimit({ max: limits.perAddressPerMinute, keyGenerator: (req) => `address:${normalizeIP(req.ip)}` });
  const perConsent = app.createRateLimit({ max: limits.consentPerAddressPerMinute, keyGenerator: (req) => `consent:${normalizeIP(req.ip)}` });
  const guesses = app.createRateLimit({ max: limits.perAddressPerMinute, keyGenerator: (req) => `guess:${normalizeIP(req.ip)}` });

  const countCaller = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const state = closest([await perKey(req), ...(WRITE_METHODS.has(req.method) ? [await writes(req)] : [])]);
    if (state !== undefined) refuseWhenSpent(reply, state, state.remaining < 0);
  };

  app.addHook('onRoute', (route: RouteOptions) => {
    const operationId = (route.schema as { operationId?: string } | undefined)?.operationId;
    const kind = (operationId === undefined ? undefined : routeLimits.get(operationId)) ?? 'address';
    route.config = { ...route.config, heraldRateLimit: kind };
    // Runs after the operation's authentication, which route-options moved to onRequest.
    if (kind === 'caller') route.onRequest = [...asList(route.onRequest), countCaller] as RouteOptions['onRequest'];
  });

  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    // Unknown paths have no route config: they count per address, like any public page.
    const kind = req.routeOptions.config.heraldRateLimit ?? 'address';
    if (kind !== 'address' && kind !== 'consent') return;
    const address = stateOf(await (kind === 'consent' ? perConsent : perAddress)(req));
    if (address !== undefined) refuseWhenSpent(reply, address, address.remaining < 0);
  });

  // A 401 is a failed guess at a key, and counts in the address's guess bucket; past it the error
  // handler answers 429. Counted when the failure is thrown rather than as every answer is sent:
  // a hook on sending would cost every request.
  app.addHook('onError', async (req: FastifyRequest, reply: FastifyReply, error: Error & { statusCode?: number }) => {
    if (error.statusCode !== 401 || req.routeOptions.config.heraldRateLimit !== 'caller') return;
    const guessed = stateOf(await guesses(req));
    if (guessed === undefined) return;
    setHeaders(reply, guessed);
    if (guessed.remaining < 0) req.heraldGuessesSpentFor = Math.max(1, guessed.resetSeconds);
  });

  return async (req, reply) => {
    const state = stateOf(await perAddress(req));
    setHeaders(reply, state);
    return state !== undefined && state.remaining < 0 ? Math.max(1, state.resetSeconds) : undefined;
  };
}

/**
 * Counts a request that Fastify refused before routing it (a malformed path), which no hook sees,
 * against its address and sets its headers; resolves to the seconds to wait when the address is
 * over its limit.
 */
export type UnroutedLimit = (req: FastifyRequest, reply: FastifyReply) => Promise<number | undefined>;

function setHeaders(reply: FastifyReply, state: BucketState | undefined): void {
  if (state === undefined) return;
  reply.header('ratelimit-limit', state.limit);
  reply.header('ratelimit-remaining', Math.max(0, state.remaining));
  reply.header('ratelimit-reset', state.resetSeconds);
}

/** Which operations are limited how: per caller when they need a key, per address when public, not at all when the spec says so. */
export function routeLimitsFromSpec(document: { paths?: Record<string, Record<string, unknown>>; security?: unknown[] }): Map<string, RouteLimit> {
  const kinds = new Map<string, RouteLimit>();
  for (const item of Object.values(document.paths ?? {})) {
    for (const op of Object.values(item)) {
      const operation = op as { operationId?: string; security?: unknown[]; 'x-rate-limited'?: boolean; 'x-rate-limit'?: string };
      if (typeof operation.operationId !== 'string') continue;
      const security = operation.security ?? document.security ?? [];
      const kind: RouteLimit =
        operation['x-rate-limited'] === false ? 'none' : security.length > 0 ? 'caller' : operation['x-rate-limit'] === 'consent' ? 'consent' : 'address';
      kinds.set(operation.operationId, kind);
    }
  }
  return kinds;
}

type LimiterResult = Awaited<ReturnType<ReturnType<FastifyInstance['createRateLimit']>>>;

/** A limiter's answer as a bucket; `remaining` goes below zero once the request is over the limit. */
function stateOf(result: LimiterResult): BucketState | undefined {
  if (result.isAllowed) return undefined;
  return { limit: result.max, remaining: result.isExceeded ? -1 : result.remaining, resetSeconds: result.ttlInSeconds };
}

function closest(results: LimiterResult[]): BucketState | undefined {
  const states = results.map(stateOf).filter((s): s is BucketState => s !== undefined);
  return states.sort((a, b) => a.remaining - b.remaining || a.limit - b.limit)[0];
}

/** Shows the bucket in the answer's headers (a later, closer bucket replaces it), and refuses the request when it is spent. */
function refuseWhenSpent(reply: FastifyReply, state: BucketState, spent: boolean): void {
  setHeaders(reply, state);
  if (spent) throw new HttpError(429, RATE_LIMIT_EXCEEDED, Math.max(1, state.resetSeconds));
}

/** How long start-up waits for Redis before serving (unlimited until it connects). */
const REDIS_CONNECT_WAIT_MS = 1000;

async function connectRedis(app: FastifyInstance, url: string): Promise<Redis> {
  const redis = new Redis(url, {
    // Bounded, and never queued while disconnected: a request must not wait on Redis.
    connectTimeout: 1000,
    commandTimeout: 500,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
  });
  redis.on('error', (err: Error) => app.log.warn({ errorName: err.name }, 'rate-limit store (Redis) not available; requests are not limited meanwhile'));
  app.addHook('onClose', async () => {
    await redis.quit().catch(() => redis.disconnect());
  });
  // Commands are not queued while disconnected, so wait for the connection before the first request.
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, REDIS_CONNECT_WAIT_MS);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    redis.once('ready', done);
    redis.once('error', done);
  });
  return redis;
}
