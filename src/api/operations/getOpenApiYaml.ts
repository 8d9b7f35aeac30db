import type { OperationHandler } from '../contract/handler-types.js';
import { CompressedText } from '../kit/compressed.js';
import type { ReferenceContent } from '../kit/context.js';

export function getOpenApiYamlHandler({ specification }: ReferenceContent): OperationHandler<'getOpenApiYaml'> {
  const compressed = new CompressedText();
  return async (req, reply) => {
    reply.type('application/yaml; charset=utf-8');
    return compressed.send(req, reply, specification.yaml);
  };
}
