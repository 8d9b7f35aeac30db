import type { OperationHandler } from '../contract/handler-types.js';
import { toMediaView } from '../../domain/media/media-view.js';
import { storeMediaFile } from '../../domain/media/store-media-file.js';
import { callerOf } from '../kit/caller.js';
import type { OperationContext } from '../kit/context.js';
import { claimIdempotencyKeyForBody, keepWithWork } from '../kit/idempotency.js';
import { receiveUpload } from '../kit/multipart-upload.js';

const CREATED = 201;

export function uploadMediaHandler(ctx: OperationContext): OperationHandler<'uploadMedia'> {
  return async (req, reply) => {
    const { storage, probe, maxUploadBytes } = ctx.deps();
    const db = ctx.db();
    const { staged, altText } = await receiveUpload(req, storage, maxUploadBytes);
    try {
      // The same upload is the same file and alt text, whatever the form's framing or length header.
      await claimIdempotencyKeyForBody(req, { file: staged.sha256, altText });
    } catch (err) {
      await staged.discard();
      throw err;
    }
    const keep = keepWithWork(req, ctx.deps().vault, CREATED);
    const row = await storeMediaFile(db, storage, probe, callerOf(req).userId, staged, altText, keep && ((trx, stored) => keep(trx, toMediaView(stored))));
    reply.code(CREATED);
    return toMediaView(row);
  };
}
