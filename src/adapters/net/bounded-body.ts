/** An answer whose body (counted after decompression) is larger than its reader accepts. */
export class AnswerTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`The answer is larger than ${formatBytes(limitBytes)}`);
    this.name = 'AnswerTooLargeError';
  }
}

/**
 * Reads an answer's body as UTF-8 text, at most `limitBytes` of it after decompression: the
 * fetch decompresses gzip and brotli on the fly, so a small compressed body can expand without
 * bound. Past the limit the body is cancelled (no more is read or inflated) and this rejects with
 * AnswerTooLargeError. A declared Content-Length over the limit is refused before reading.
 */
export async function readBoundedText(response: Response, limitBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  const encoded = response.headers.get('content-encoding');
  if ((encoded === null || encoded === 'identity') && Number.isFinite(declared) && declared > limitBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new AnswerTooLargeError(limitBytes);
  }
  if (response.body === null) return '';
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limitBytes) {
      await reader.cancel().catch(() => undefined);
      throw new AnswerTooLargeError(limitBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function formatBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  if (Number.isInteger(mib)) return `${mib} MiB`;
  const kib = bytes / 1024;
  return Number.isInteger(kib) ? `${kib} KiB` : `${bytes} bytes`;
}
