import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { HttpError } from './http-error.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The request content types the operation's spec lists. */
    acceptedContentTypes?: string[];
  }
}

type BodySchema = { content?: Record<string, { schema?: unknown }> } | undefined;
type Hooks = RouteOptions['onRequest'];

/**
 * Adjusts the routes fastify-openapi-glue builds, before they are registered:
 * - each operation accepts only the request content types its spec lists (else 415);
 * - a JSON body schema is made to apply to every request: keyed by content type, Fastify would
 *   skip validation of bodies of another type, or of no body at all;
 * - a multipart body is read and checked by its operation while it streams, so it has no schema here;
 * - glue runs security as a preHandler, after validation; moving it to onRequest means a caller
 *   without a valid key learns nothing about the schema (401 before 400);
 * - an API operation's query takes only the parameters its spec lists;
 * - header parameters are named in lower case, as Node hands headers over: with a validator
 *   compiler of its own, Fastify leaves the spec's `Idempotency-Key` as it is, and it would never match.
 */
export function adjustGlueRoutes(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const content = (route.schema?.body as BodySchema)?.content;
    if (route.schema && content) {
      const types = Object.keys(content);
      const jsonSchema = content['application/json']?.schema;
      if (jsonSchema !== undefined) route.schema.body = jsonSchema;
      else delete route.schema.body;
      route.config = { ...route.config, acceptedContentTypes: types };
      route.preValidation = [requireContentType(types), ...asList(route.preValidation)] as RouteOptions['preValidation'];
    }
    // An unknown query parameter of the API is refused as an unknown body field is (a misspelt
    // `limit` would otherwise be ignored in silence). Public pages keep taking what others add to
    // their URLs: platforms' extra parameters on the consent callback, a CDN's on media URLs.
    if (route.url.startsWith('/api/')) {
      route.schema = {
        ...route.schema,
        querystring: { type: 'object', properties: {}, ...(route.schema?.querystring as object | undefined), additionalProperties: false },
      };
    }
    const headers = route.schema?.headers as { properties?: Record<string, unknown>; required?: string[] } | undefined;
    if (headers?.properties) {
      headers.properties = Object.fromEntries(Object.entries(headers.properties).map(([name, schema]) => [name.toLowerCase(), schema]));
      if (headers.required) headers.required = headers.required.map((name) => name.toLowerCase());
    }
    if (route.preHandler) {
      route.onRequest = [...asList(route.onRequest), ...asList(route.preHandler)] as Hooks;
      route.preHandler = [];
    }
  });
}

function requireContentType(accepted: string[]) {
  return async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const type = req.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
    // A request without a body has no type; the schema then reports the missing body.
    if (type !== undefined && !accepted.includes(type)) {
      throw new HttpError(415, unsupportedContentType(accepted));
    }
  };
}

/** The 415 message, naming what the operation takes (JSON where the route says nothing). */
export function unsupportedContentType(accepted: readonly string[] | undefined): string {
  return `Unsupported content type: send ${(accepted ?? ['application/json']).join(' or ')}`;
}

/** The content types an operation's spec accepts, as recorded on its route. */
export function acceptedContentTypes(req: FastifyRequest): string[] | undefined {
  return req.routeOptions.config.acceptedContentTypes;
}

/** A route's hook option as a list, to add hooks to it. */
export function asList<T>(hooks: T | T[] | undefined): T[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
}
