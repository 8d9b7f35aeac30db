import type { OperationHandler } from '../contract/handler-types.js';
import { deleteMedia } from '../../domain/media/delete-media.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';

export function deleteMediaHandler(ctx: OperationContext): OperationHandler<'deleteMedia'> {
  return async (req) => {
    await deleteMedia(ctx.db(), ctx.deps().storage, callerOf(req).userId, req.params.id);
    return { success: true };
  };
}
