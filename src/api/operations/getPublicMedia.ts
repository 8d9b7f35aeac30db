import { Readable } from 'node:stream';
import parseRange from 'range-parser';
import type { OperationHandler } from '../contract/handler-types.js';
import { DomainError } from '../../domain/errors.js';
import { openPublicMedia } from '../../domain/media/public-media.js';
import type { OperationContext } from '../kit/context.js';

/** Serves a media file to whoever holds its signed URL: whole, or one byte range of it. */
export function getPublicMediaHandler(ctx: OperationContext): OperationHandler<'getPublicMedia'> {
  return async (req, reply) => {
    const { id } = req.params;
    const { expires, signature } = req.query;
    const file = await openPublicMedia(ctx.db(), ctx.deps().storage, ctx.deps().publicMedia, { id, expires, signature, now: ctx.now() });
    reply.header('accept-ranges', 'bytes').header('cache-control', 'private, no-transform');
    const ranges = req.headers.range === undefined ? undefined : parseRange(file.bytes, req.headers.range, { combine: true });
    if (ranges === -1) {
      reply.header('content-range', `bytes */${file.bytes}`);
      throw new DomainError('range_not_satisfiable', `Range not satisfiable: the file has ${file.bytes} bytes`);
    }
    // No Range, a malformed one (-2), a unit other than bytes, or several ranges: the whole file (RFC 9110 §14.2).
    const range = ranges !== undefined && ranges !== -2 && ranges.type === 'bytes' && ranges.length === 1 ? ranges[0] : undefined;
    reply.type(file.mime);
    // HEAD answers from the stored size and type: opening the file would read it (S3: a GetObject).
    // An empty stream keeps the Content-Length set here (an absent body would make Fastify send 0).
    if (req.method === 'HEAD') {
      if (range !== undefined) reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${file.bytes}`);
      return reply.header('content-length', range === undefined ? file.bytes : range.end - range.start + 1).send(Readable.from([]));
    }
    const stream = await file.open(range);
    if (range === undefined) return reply.header('content-length', file.bytes).send(stream);
    return reply
      .code(206)
      .header('content-range', `bytes ${range.start}-${range.end}/${file.bytes}`)
      .header('content-length', range.end - range.start + 1)
      .send(stream);
  };
}
