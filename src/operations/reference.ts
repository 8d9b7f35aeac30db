import { readFile } from 'node:fs/promises';
import { DomainError } from '../domain/errors.js';
import type { Specification } from '../http/specification.js';
import type { OperationHandler } from './handler-types.js';

/** What the reference operations serve: the spec the routes came from, and the built HTML page. */
export interface ReferenceContent {
  specification: Specification;
  htmlPath: string;
}

export function getOpenApiJsonHandler({ specification }: ReferenceContent): OperationHandler<'getOpenApiJson'> {
  return async () => specification.document;
}

export function getOpenApiYamlHandler({ specification }: ReferenceContent): OperationHandler<'getOpenApiYaml'> {
  return async (_req, reply) => {
    reply.type('application/yaml; charset=utf-8');
    return specification.yaml;
  };
}

export function getApiReferenceHandler({ htmlPath }: ReferenceContent): OperationHandler<'getApiReference'> {
  return async (_req, reply) => {
    const html = await readFile(htmlPath, 'utf8').catch(() => {
      throw new DomainError('not_found', 'API reference not built: run npm run docs');
    });
    reply.type('text/html; charset=utf-8');
    return html;
  };
}
