import { deleteMedia } from '../domain/media/delete-media.js';
import { callerOf } from './caller.js';
import type { OperationContext } from './context.js';
import type { OperationHandler } from './handler-types.js';

export function deleteMediaHandler(ctx: OperationContext): OperationHandler<'deleteMedia'> {
  return async (req) => {
    await deleteMedia(ctx.db(), ctx.media.storage, callerOf(req).userId, req.params.id);
    return { success: true };
  };
}
