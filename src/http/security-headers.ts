import helmet from '@fastify/helmet';
import type { FastifyInstance, RouteOptions } from 'fastify';

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

/**
 * Helmet's security headers on every answer: HSTS, nosniff, no framing, no referrer, and a
 * content security policy that allows nothing on the API and only the page itself on /docs.
 */
export async function installSecurityHeaders(app: FastifyInstance): Promise<void> {
  // Added before helmet's own onRoute hook, which reads `route.helmet`.
  app.addHook('onRoute', (route: RouteOptions) => {
    const operationId = (route.schema as { operationId?: string } | undefined)?.operationId;
    if (operationId !== undefined && HTML_OPERATIONS.has(operationId)) {
      route.helmet = { contentSecurityPolicy: { useDefaults: false, directives: REFERENCE_POLICY } };
    }
  });
  await app.register(helmet, {
    global: true,
    contentSecurityPolicy: { useDefaults: false, directives: API_POLICY },
    referrerPolicy: { policy: 'no-referrer' },
  });
}
