import type { FastifyInstance, RouteOptions } from 'fastify';

/**
 * Adjusts the routes fastify-openapi-glue builds, before they are registered:
 * - the request body schema is keyed by content type, and Fastify then skips validation of bodies
 *   of any other type (or of no body at all); the one JSON schema is made to apply to every request;
 * - glue runs security as a preHandler, after validation; moving it to onRequest means a caller
 *   without a valid key learns nothing about the schema (401 before 400).
 */
export function adjustGlueRoutes(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const body = route.schema?.body as { content?: Record<string, { schema?: unknown }> } | undefined;
    const jsonSchema = body?.content?.['application/json']?.schema;
    if (route.schema && jsonSchema !== undefined) route.schema.body = jsonSchema;

    if (route.preHandler) {
      const security = Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler];
      const onRequest = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
      route.onRequest = [...onRequest, ...security] as RouteOptions['onRequest'];
      route.preHandler = [];
    }
  });
}
