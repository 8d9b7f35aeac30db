import type { OperationHandler } from '../contract/handler-types.js';
import { CompressedText } from '../kit/compressed.js';
import type { ReferenceContent } from '../kit/context.js';

export function getOpenApiJsonHandler({ specification }: ReferenceContent): OperationHandler<'getOpenApiJson'> {
  const compressed = new CompressedText();
  const json = JSON.stringify(specification.document);
  return async (req, reply) => {
    reply.type('application/json; charset=utf-8');
    // Already JSON: Fastify sends a string of a JSON type as it is.
    return compressed.send(req, reply, json) as unknown as Awaited<ReturnType<OperationHandler<'getOpenApiJson'>>>;
  };
}
