import { listMedia } from '../domain/media/list-media.js';
import { callerOf } from './caller.js';
import type { OperationContext } from './context.js';
import { defaulted, type OperationHandler } from './handler-types.js';

export function listMediaHandler(ctx: OperationContext): OperationHandler<'listMedia'> {
  return async (req) =>
    listMedia(ctx.db(), callerOf(req).userId, defaulted(req.query.limit, 'limit'), defaulted(req.query.offset, 'offset'));
}
