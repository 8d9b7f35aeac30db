import multipart from '@fastify/multipart';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import openapiGlue from 'fastify-openapi-glue';
import { loadSpecification, REFERENCE_HTML_PATH } from '../contract/specification.js';
import type { OperationContext } from '../operations-kit/context.js';
import { createSecurityHandlers } from './bearer-auth.js';
import { answerFrameworkError, installErrorHandlers } from './error-handler.js';
import { installIdempotency } from './idempotency.js';
import { acceptJsonBodiesOnly } from './json-body.js';
import { adjustGlueRoutes } from './route-options.js';
import { createServiceHandlers } from './service-handlers.js';
import { createValidatorCompiler } from './validator.js';

export interface AppOptions {
  context: OperationContext;
  logger?: FastifyServerOptions['logger'];
  /** The built API reference page served at /docs. */
  referenceHtmlPath?: string;
}

/** The HTTP API: every route comes from the spec's operationIds, validated by its schemas. */
export async function buildApp({ context, logger = false, referenceHtmlPath = REFERENCE_HTML_PATH }: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger,
    // Long path ids must still reach the operation (and be answered "Post not found"), not the router's 404.
    routerOptions: { maxParamLength: 65_536 },
    frameworkErrors: answerFrameworkError,
  });
  app.setValidatorCompiler(createValidatorCompiler());
  acceptJsonBodiesOnly(app);
  // Streaming only: the upload operation reads its parts itself, so nothing is buffered whole.
  await app.register(multipart);
  installErrorHandlers(app);
  adjustGlueRoutes(app);
  installIdempotency(app, context);
  const specification = await loadSpecification();
  await app.register(openapiGlue, {
    // A copy, so what glue does to the document it wires from never shows in the one that is served.
    specification: structuredClone(specification.document),
    serviceHandlers: createServiceHandlers(context, { specification, htmlPath: referenceHtmlPath }),
    securityHandlers: createSecurityHandlers(context),
  });
  return app;
}
