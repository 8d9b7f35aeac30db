import multipart from '@fastify/multipart';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import openapiGlue from 'fastify-openapi-glue';
import type { Bindings, ChildLoggerOptions } from 'pino';
import { loadSpecification, REFERENCE_HTML_PATH } from './contract/specification.js';
import type { OperationContext } from './kit/context.js';
import { createSecurityHandlers } from './bearer-auth.js';
import { answerClientError, answerFrameworkError, installErrorHandlers } from './error-handler.js';
import { installIdempotency } from './idempotency.js';
import { DEFAULT_RATE_LIMITS, installRateLimits, routeLimitsFromSpec, type RateLimitOptions, type UnroutedLimit } from './rate-limits.js';
import { acceptJsonBodiesOnly } from './json-body.js';
import { adjustGlueRoutes } from './route-options.js';
import { installSecurityHeaders } from './security-headers.js';
import { serializersOnFirstUse } from './serializer.js';
import { createServiceHandlers } from './service-handlers.js';
import { createValidatorCompiler } from './validator.js';

export interface AppOptions {
  context: OperationContext;
  logger?: FastifyServerOptions['logger'];
  /** A pino logger of the caller's, used instead of one built from `logger`. */
  loggerInstance?: FastifyBaseLogger;
  /** The built API reference page served at /docs. */
  referenceHtmlPath?: string;
  /** Requests allowed per minute, and where they are counted. */
  rateLimits?: RateLimitOptions;
  /** Fastify's trustProxy: which proxies' X-Forwarded-For to believe for the client's address. */
  trustProxy?: FastifyServerOptions['trustProxy'];
}

/** One log line per request, written when it is answered and naming the request, rather than two. */
class AnsweredOnly extends LogController {
  /**
   * The logger of those lines, once the app has one. Each line holds only the request and reply as
   * Fastify's serializers write them (method, URL, host, address, status), never a header or a body,
   * so it skips the search for secret keys at any depth that every other line pays for.
   */
  lines: FastifyBaseLogger | undefined;

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error || this.lines === undefined) super.requestCompleted(error, request, reply);
    else if (!this.isLogDisabled(request))
      this.lines.info({ reqId: request.id, req: withoutPermissions(request), res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

/** Paths whose query string is a permission: a one-time authorization code and state, a signed media URL's signature. */
const PERMISSION_QUERIES = ['/oauth/callback', '/media/'];

/** Paths whose last segment is a permission: a consent link's one-time token. */
const PERMISSION_PATHS = ['/oauth/start/'];

/** The request as Fastify's serializer reads it, its URL without a query string or path token that carries a permission. */
function withoutPermissions(request: FastifyRequest): FastifyRequest {
  const inPath = PERMISSION_PATHS.find((path) => request.url.startsWith(path));
  const query = request.url.indexOf('?');
  if (inPath === undefined && (query === -1 || !PERMISSION_QUERIES.some((path) => request.url.startsWith(path)))) return request;
  const url = inPath === undefined ? `${request.url.slice(0, query)}?[redacted]` : `${inPath}[redacted]`;
  return { method: request.method, url, headers: request.headers, host: request.host, ip: request.ip, socket: request.socket } as FastifyRequest;
}

type LogMethod = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/**
 * A request's logger, made when something first logs through it: most requests log only the line
 * above, and need no pino child of their own (bench/devices.md).
 */
class LazyChild implements FastifyBaseLogger {
  #made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  #logger(): FastifyBaseLogger {
    return (this.#made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.#made?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.#logger().level = level;
  }

  #call(method: LogMethod, args: unknown[]): void {
    const logger = this.#logger();
    logger[method](...(args as [string]));
  }

  fatal(...args: unknown[]): void {
    this.#call('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#call('error', args);
  }
  warn(...args: unknown[]): void {
    this.#call('warn', args);
  }
  info(...args: unknown[]): void {
    this.#call('info', args);
  }
  debug(...args: unknown[]): void {
    this.#call('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#call('trace', args);
  }
  silent(...args: unknown[]): void {
    this.#call('silent', args);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger().child(bindings, options);
  }
}

/** The HTTP API: every route comes from the spec's operationIds, validated by its schemas. */
export async function buildApp({
  context,
  logger = false,
  loggerInstance,
  referenceHtmlPath = REFERENCE_HTML_PATH,
  rateLimits = { limits: DEFAULT_RATE_LIMITS },
  trustProxy = false,
}: AppOptions): Promise<FastifyInstance> {
  const limiting: { unrouted?: UnroutedLimit } = {};
  const requestLines = new AnsweredOnly();
  const app = Fastify({
    ...(loggerInstance === undefined ? { logger } : { loggerInstance }),
    // Long path ids must still reach the operation (and be answered "Post not found"), not the router's 404.
    routerOptions: { maxParamLength: 65_536 },
    // Requests refused before routing still count against their address, once the limits exist.
    frameworkErrors: (err, req, reply) => void answerFrameworkError(err, req, reply, limiting.unrouted),
    clientErrorHandler: answerClientError,
    trustProxy,
    logController: requestLines,
    childLoggerFactory: (logger, bindings, options) => new LazyChild(logger, bindings, options),
    schemaController: { compilersFactory: { buildSerializer: serializersOnFirstUse() } },
  });
  requestLines.lines = app.log.child({}, { redact: [] });
  app.setValidatorCompiler(createValidatorCompiler());
  installSecurityHeaders(app);
  acceptJsonBodiesOnly(app);
  // Streaming only: the upload operation reads its parts itself, so nothing is buffered whole.
  await app.register(multipart);
  installErrorHandlers(app);
  const specification = await loadSpecification();
  adjustGlueRoutes(app);
  limiting.unrouted = await installRateLimits(app, rateLimits, routeLimitsFromSpec(specification.document));
  installIdempotency(app, context);
  await app.register(openapiGlue, {
    // A copy, so what glue does to the document it wires from never shows in the one that is served.
    specification: structuredClone(specification.document),
    serviceHandlers: createServiceHandlers(context, { specification, htmlPath: referenceHtmlPath }),
    securityHandlers: createSecurityHandlers(context),
  });
  return app;
}
