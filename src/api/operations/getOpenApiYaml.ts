import type { OperationHandler } from '../contract/handler-types.js';
import type { ReferenceContent } from '../kit/context.js';

export function getOpenApiYamlHandler({ specification }: ReferenceContent): OperationHandler<'getOpenApiYaml'> {
  return async (_req, reply) => {
    reply.type('application/yaml; charset=utf-8');
    return specification.yaml;
  };
}
