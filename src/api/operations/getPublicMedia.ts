import type { ServerResponse } from 'node:http';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream';
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
    // HEAD answers GET's headers from the medium's row alone: the stored file is never opened. An empty
    // stream rather than no payload, because Fastify's HEAD route sets Content-Length 0 for no payload.
    const stream = req.method === 'HEAD' ? Readable.from([]) : stalling(await file.open(range), ctx.deps().publicMedia.stallMs, reply.raw);
    reply.type(file.mime);
    if (range === undefined) return reply.header('content-length', file.bytes).send(stream);
    return reply
      .code(206)
      .header('content-range', `bytes ${range.start}-${range.end}/${file.bytes}`)
      .header('content-length', range.end - range.start + 1)
      .send(stream);
  };
}

/**
 * The stored file's stream, cut with the response when no bytes move for `stallMs`: a reader that stops
 * reading would otherwise hold the stream (on S3, a socket of the store) for as long as it liked.
 */
function stalling(source: Readable, stallMs: number, response: ServerResponse): Readable {
  const timer = setTimeout(() => {
    watched.destroy();
    response.destroy();
  }, stallMs);
  // Each chunk taken is progress; under backpressure from a reader who does not read, none is taken.
  const watched = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      timer.refresh();
      done(null, chunk);
    },
  });
  response.once('close', () => clearTimeout(timer));
  // Destroying either end destroys the other (and the store's socket with the source).
  pipeline(source, watched, () => clearTimeout(timer));
  return watched;
}
