import { randomBytes } from 'node:crypto';
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { chunkRanges, readRange, uploadInChunks, type ByteRange } from '../../src/adapters/platforms/chunked-upload.js';

const dir = mkdtempSync(join(tmpdir(), 'herald-chunks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A media file on disk, opened as media storage opens it, recording each range asked for. */
function mediaFile(bytes: Buffer) {
  const path = join(dir, `file-${randomBytes(4).toString('hex')}`);
  writeFileSync(path, bytes);
  const opened: (ByteRange | undefined)[] = [];
  return {
    bytes: bytes.length,
    opened,
    open: (range?: ByteRange) => {
      opened.push(range);
      return Promise.resolve(createReadStream(path, range));
    },
  };
}

describe('chunkRanges', () => {
  it('cuts a file into chunks of the given size, the last one short', () => {
    expect(chunkRanges(10, 4)).toEqual([
      { start: 0, end: 3 },
      { start: 4, end: 7 },
      { start: 8, end: 9 },
    ]);
    expect(chunkRanges(8, 4)).toEqual([
      { start: 0, end: 3 },
      { start: 4, end: 7 },
    ]);
    expect(chunkRanges(3, 4)).toEqual([{ start: 0, end: 2 }]);
  });

  it("joins the remainder to the last chunk when asked (TikTok's floor(size / chunk) chunks)", () => {
    expect(chunkRanges(10, 4, { remainderJoinsLast: true })).toEqual([
      { start: 0, end: 3 },
      { start: 4, end: 9 },
    ]);
    expect(chunkRanges(3, 4, { remainderJoinsLast: true })).toEqual([{ start: 0, end: 2 }]);
  });

  it('refuses an empty file or an empty chunk', () => {
    expect(() => chunkRanges(0, 4)).toThrow('A file to upload has at least one byte, got 0');
    expect(() => chunkRanges(10, 0)).toThrow('A chunk has at least one byte, got 0');
  });

  it('covers every byte exactly once, in order, no chunk over its size (or, joined, under twice it)', () => {
    fc.assert(
      // At most 1,000 chunks, as the platforms allow.
      fc.property(
        fc.integer({ min: 1, max: 3_000_000 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.boolean(),
        (chunk, chunks, fraction, join) => {
          const total = Math.max(1, Math.round(chunk * chunks * fraction));
          const ranges = chunkRanges(total, chunk, { remainderJoinsLast: join });
          expect(ranges[0]?.start).toBe(0);
          expect(ranges.at(-1)?.end).toBe(total - 1);
          ranges.forEach((range, i) => {
            if (i > 0) expect(range.start).toBe((ranges[i - 1] as ByteRange).end + 1);
            const size = range.end - range.start + 1;
            expect(size).toBeGreaterThan(0);
            expect(size).toBeLessThan(join && i === ranges.length - 1 ? 2 * chunk : chunk + 1);
          });
        },
      ),
    );
  });
});

describe('uploadInChunks', () => {
  it("sends each range's bytes in order, reading one chunk at a time, and is told of each acknowledged one", async () => {
    const content = randomBytes(10_000);
    const file = mediaFile(content);
    const ranges = chunkRanges(content.length, 4096);
    const events: string[] = [];
    const received: Buffer[] = [];
    await uploadInChunks(file, ranges, {
      send: ({ index, range, total, body }) => {
        events.push(`send ${index} ${range.start}-${range.end}/${total}`);
        received.push(body);
        return Promise.resolve();
      },
      acknowledged: (index) => {
        events.push(`ack ${index}`);
        return Promise.resolve();
      },
    });
    expect(events).toEqual(['send 0 0-4095/10000', 'ack 0', 'send 1 4096-8191/10000', 'ack 1', 'send 2 8192-9999/10000', 'ack 2']);
    expect(Buffer.concat(received).equals(content)).toBe(true);
    expect(file.opened).toEqual(ranges);
  });

  it('resumes at the first chunk the platform does not hold, and stops at a refused one', async () => {
    const content = randomBytes(9000);
    const file = mediaFile(content);
    const ranges = chunkRanges(content.length, 2000);
    const sent: number[] = [];
    const acknowledged: number[] = [];
    const upload = uploadInChunks(
      file,
      ranges,
      {
        send: ({ index, body, range }) => {
          expect(body.equals(content.subarray(range.start, range.end + 1))).toBe(true);
          sent.push(index);
          return index === 3 ? Promise.reject(new Error('503 from the platform')) : Promise.resolve();
        },
        acknowledged: (index) => Promise.resolve(void acknowledged.push(index)),
      },
      2,
    );
    await expect(upload).rejects.toThrow('503 from the platform');
    expect(sent).toEqual([2, 3]);
    expect(acknowledged).toEqual([2]);
  });

  it('fails clearly when the stored file is shorter than its recorded size', async () => {
    const file = mediaFile(randomBytes(100));
    await expect(readRange(file, { start: 50, end: 199 })).rejects.toThrow('The media file ended early: read 50 of 150 bytes at offset 50');
  });
});
