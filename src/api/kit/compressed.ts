import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';

type Encoding = 'br' | 'gzip';

/**
 * A large text the service serves as it is (the reference page, the spec), compressed once for
 * each encoding and kept while the text stays the same: the reference is 2.8 MB as HTML, a
 * tenth of that compressed.
 */
export class CompressedText {
  private text: string | undefined;
  private readonly encoded = new Map<Encoding, Buffer>();

  /**
   * The text as the client accepts it: brotli, else gzip, else as it is; `Vary` says the answer
   * depends on it. Compressed bytes are typed as the text they stand for: Fastify sends a Buffer as it is.
   */
  send(req: FastifyRequest, reply: FastifyReply, text: string): string {
    reply.header('vary', 'Accept-Encoding');
    const encoding = acceptedEncoding(req.headers['accept-encoding']);
    if (encoding === undefined) return text;
    if (text !== this.text) {
      this.text = text;
      this.encoded.clear();
    }
    let body = this.encoded.get(encoding);
    if (body === undefined) {
      body =
        encoding === 'br'
          ? brotliCompressSync(text, { params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: Buffer.byteLength(text) } })
          : gzipSync(text, { level: 9 });
      this.encoded.set(encoding, body);
    }
    reply.header('content-encoding', encoding);
    return body as unknown as string;
  }
}

/** The encoding to answer in, from an Accept-Encoding header: one the client did not refuse with q=0. */
function acceptedEncoding(header: string | undefined): Encoding | undefined {
  if (header === undefined) return undefined;
  const accepted = new Set<string>();
  for (const item of header.split(',')) {
    const [name = '', ...params] = item.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q !== undefined && Number(q.slice(2)) === 0) continue;
    accepted.add(name);
  }
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip')) return 'gzip';
  return undefined;
}
