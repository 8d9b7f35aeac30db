import { storeMediaFile } from '../domain/media/store-media-file.js';
import { toMediaView } from '../domain/media/media-view.js';
import { callerOf } from './caller.js';
import type { OperationContext } from './context.js';
import type { OperationHandler } from './handler-types.js';
import { receiveUpload } from './multipart-upload.js';

export function uploadMediaHandler(ctx: OperationContext): OperationHandler<'uploadMedia'> {
  return async (req, reply) => {
    const { storage, maxUploadBytes } = ctx.media;
    const db = ctx.db();
    const { staged, altText } = await receiveUpload(req, storage, maxUploadBytes);
    const row = await storeMediaFile(db, storage, callerOf(req).userId, staged, altText);
    reply.code(201);
    return toMediaView(row);
  };
}
