import type { OperationHandler } from '../contract/handler-types.js';
import type { ReferenceContent } from '../kit/context.js';

export function getOpenApiJsonHandler({ specification }: ReferenceContent): OperationHandler<'getOpenApiJson'> {
  return () => Promise.resolve(specification.document);
}
