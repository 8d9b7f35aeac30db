import type { MediaToPublish } from '../../domain/ports/publisher.js';

/** Bytes `start` to `end` of a file, both inclusive (as HTTP's Content-Range counts them). */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * The ranges a file of `total` bytes is sent in, `chunkBytes` each, in order, covering every byte
 * once. With `remainderJoinsLast` the bytes past the last whole chunk join it rather than making a
 * short chunk of their own (TikTok counts `floor(size / chunk)` chunks, the last one larger); a file
 * smaller than one chunk is always one range.
 */
export function chunkRanges(total: number, chunkBytes: number, options: { remainderJoinsLast?: boolean } = {}): ByteRange[] {
  if (!Number.isSafeInteger(total) || total <= 0) throw new RangeError(`A file to upload has at least one byte, got ${total}`);
  if (!Number.isSafeInteger(chunkBytes) || chunkBytes <= 0) throw new RangeError(`A chunk has at least one byte, got ${chunkBytes}`);
  const count = options.remainderJoinsLast === true ? Math.max(1, Math.floor(total / chunkBytes)) : Math.ceil(total / chunkBytes);
  return Array.from({ length: count }, (_, i) => ({ start: i * chunkBytes, end: i === count - 1 ? total - 1 : (i + 1) * chunkBytes - 1 }));
}

/** Reads one range of a media file into memory: a chunk, never the whole file. */
export async function readRange(media: Pick<MediaToPublish, 'open'>, range: ByteRange): Promise<Buffer> {
  const expected = range.end - range.start + 1;
  const buffers: Buffer[] = [];
  let read = 0;
  for await (const data of await media.open(range)) {
    const buffer = Buffer.isBuffer(data) ? data : Buffer.from(data as Uint8Array);
    buffers.push(buffer);
    read += buffer.length;
  }
  if (read !== expected) throw new Error(`The media file ended early: read ${read} of ${expected} bytes at offset ${range.start}`);
  return Buffer.concat(buffers, read);
}

export interface ChunkSender {
  /** Sends one chunk and resolves once the platform has acknowledged it; a rejection stops the upload there. */
  send(chunk: { index: number; range: ByteRange; total: number; body: Buffer }): Promise<void>;
  /** Told after each acknowledged chunk, to store how far the upload has got before the next is read. */
  acknowledged?(index: number): Promise<void>;
}

/**
 * Sends a media file in the given ranges, one at a time and in order (every platform wants its
 * chunks sequentially), starting at range `from` (the first one the platform does not hold yet,
 * when an interrupted upload resumes). At most one chunk is in memory at a time.
 */
export async function uploadInChunks(
  media: Pick<MediaToPublish, 'open' | 'bytes'>,
  ranges: readonly ByteRange[],
  sender: ChunkSender,
  from = 0,
): Promise<void> {
  for (let index = from; index < ranges.length; index++) {
    const range = ranges[index] as ByteRange;
    await sender.send({ index, range, total: media.bytes, body: await readRange(media, range) });
    await sender.acknowledged?.(index);
  }
}
