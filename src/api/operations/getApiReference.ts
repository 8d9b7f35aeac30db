import { readFile } from 'node:fs/promises';
import type { OperationHandler } from '../contract/handler-types.js';
import { DomainError } from '../../domain/errors.js';
import { CompressedText } from '../kit/compressed.js';
import type { ReferenceContent } from '../kit/context.js';

export function getApiReferenceHandler({ htmlPath }: ReferenceContent): OperationHandler<'getApiReference'> {
  const compressed = new CompressedText();
  return async (req, reply) => {
    const html = await readFile(htmlPath, 'utf8').catch(() => {
      throw new DomainError('not_found', 'API reference not built: run npm run docs', undefined, 'reference_not_built');
    });
    reply.type('text/html; charset=utf-8');
    return compressed.send(req, reply, html);
  };
}
