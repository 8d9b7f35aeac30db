import type { IncomingMessage, OutgoingHttpHeader, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The security headers of the route's answers, from `securityHeaders`. */
    securityHeaders?: SecurityHeaders;
  }
}

type SecurityHeaders = Readonly<Record<string, OutgoingHttpHeader>>;

/** A JSON API runs no scripts and shows no frames: its answers may load nothing at all. */
const API_POLICY = {
  defaultSrc: ["'none'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
};

/**
 * The reference page is one self-contained file: Redoc's inline script and styles, images and
 * fonts inlined as data, and its search index in a worker made from a blob. Nothing from elsewhere.
 */
const REFERENCE_POLICY = {
  ...API_POLICY,
  scriptSrc: ["'unsafe-inline'"],
  styleSrc: ["'unsafe-inline'"],
  imgSrc: ["'self'", 'data:'],
  fontSrc: ["'self'", 'data:'],
  workerSrc: ['blob:'],
  connectSrc: ["'self'"],
};

/** Operations that serve the HTML reference and so get its policy. */
const HTML_OPERATIONS = new Set(['getApiReference']);

const helmetOptions = (directives: Record<string, string[]>): HelmetOptions => ({
  contentSecurityPolicy: { useDefaults: false, directives },
  referrerPolicy: { policy: 'no-referrer' },
});

/**
 * The headers helmet sets with these options. They depend on nothing in the request (no nonces),
 * so they are worked out once here rather than by helmet on every request.
 */
function securityHeaders(options: HelmetOptions): SecurityHeaders {
  const headers = new Map<string, OutgoingHttpHeader>();
  const recorder = {
    setHeader: (name: string, value: OutgoingHttpHeader) => headers.set(name.toLowerCase(), value),
    removeHeader: (name: string) => headers.delete(name.toLowerCase()),
  };
  // Helmet 8 throws on bad options itself rather than passing an error on.
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, () => {});
  return Object.fromEntries(headers);
}

/**
 * Helmet's security headers on every answer: HSTS, nosniff, no framing, no referrer, and a
 * content security policy that allows nothing on the API and only the page itself on /docs.
 */
export function installSecurityHeaders(app: FastifyInstance): void {
  const api = securityHeaders(helmetOptions(API_POLICY));
  const reference = securityHeaders(helmetOptions(REFERENCE_POLICY));
  app.addHook('onRoute', (route: RouteOptions) => {
    const operationId = (route.schema as { operationId?: string } | undefined)?.operationId;
    if (operationId !== undefined && HTML_OPERATIONS.has(operationId)) route.config = { ...route.config, securityHeaders: reference };
  });
  // Unknown paths have no route config, and get the API's headers. Set among the reply's own headers
  // rather than on the raw response: Node then writes them all in one pass with the others, instead of
  // storing each one as it is set and then every header of the answer again.
  app.addHook('onRequest', (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    reply.headers(req.routeOptions.config.securityHeaders ?? api);
    done();
  });
}
