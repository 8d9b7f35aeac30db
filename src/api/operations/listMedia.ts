import { defaulted, type OperationHandler } from '../contract/handler-types.js';
import { listMedia } from '../../domain/media/list-media.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';

export function listMediaHandler(ctx: OperationContext): OperationHandler<'listMedia'> {
  return async (req) => listMedia(ctx.db(), callerOf(req).userId, defaulted(req.query.limit, 'limit'), defaulted(req.query.offset, 'offset'));
}
