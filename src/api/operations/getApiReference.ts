import { readFile } from 'node:fs/promises';
import type { OperationHandler } from '../contract/handler-types.js';
import { DomainError } from '../../domain/errors.js';
import type { ReferenceContent } from '../kit/context.js';

export function getApiReferenceHandler({ htmlPath }: ReferenceContent): OperationHandler<'getApiReference'> {
  return async (_req, reply) => {
    const html = await readFile(htmlPath, 'utf8').catch(() => {
      throw new DomainError('not_found', 'API reference not built: run npm run docs', undefined, 'reference_not_built');
    });
    reply.type('text/html; charset=utf-8');
    return html;
  };
}
