import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { failed, Halt, noAnswer } from './http-outcomes.js';

/** A file for a form upload: its length known before sending, its bytes streamed. */
export interface FormFile {
  id: string;
  mime: string;
  bytes: number;
  filename: string;
  open(): Promise<Readable>;
}

/**
 * Sends an HTML form upload (multipart/form-data) to the storage bucket a platform leased
 * (Pinterest's video upload, Reddit's media lease): every field, then the file streamed from
 * storage, never whole in memory, with the Content-Length S3's POST requires. Gives the status and
 * the (small, XML) answer; a file storage cannot give or a host that never answers ends the
 * publication, to be retried.
 */
export async function postFormUpload(
  fetch: typeof globalThis.fetch,
  url: string,
  fields: Iterable<readonly [string, string]>,
  file: FormFile,
  timeoutMs: number,
): Promise<{ status: number; body: string }> {
  const boundary = `herald-${randomBytes(12).toString('hex')}`;
  const safe = (value: string) => value.replace(/["\r\n]/g, '');
  let head = '';
  for (const [name, value] of fields) head += `--${boundary}\r\nContent-Disposition: form-data; name="${safe(name)}"\r\n\r\n${value}\r\n`;
  head += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${safe(file.filename)}"\r\nContent-Type: ${file.mime}\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  let bytes: Readable;
  try {
    bytes = await file.open();
  } catch {
    throw new Halt(failed('system_error', `Media ${file.id} could not be read from storage`, { retryable: true }));
  }
  const body = Readable.from(
    (async function* () {
      yield Buffer.from(head);
      yield* bytes;
      yield Buffer.from(tail);
    })(),
  );
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(Buffer.byteLength(head) + file.bytes + Buffer.byteLength(tail)),
      },
      body: Readable.toWeb(body) as ReadableStream<Uint8Array>,
      duplex: 'half',
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: response.status, body: await response.text() };
  } catch (thrown) {
    bytes.destroy();
    throw new Halt(failed('platform_error', noAnswer(thrown, new URL(url).host).message, { retryable: true }));
  }
}
