import { Webhook } from 'standardwebhooks';
import type { WebhookSender } from '../../domain/ports/webhook-sender.js';
import { networkMessage } from '../net/network-message.js';

/** The receiver's answer is kept only as this many characters; a little more is read, the rest dropped. */
export const EXCERPT_CHARACTERS = 256;
const EXCERPT_READ_BYTES = 4096;

/**
 * Sends Standard Webhooks requests through the given fetch (the SSRF guard's: it checks every
 * address as it connects and never follows a redirect). The whole exchange, excerpt included, is
 * bounded by `timeoutMs`, so a receiver that never answers or trickles its body cannot hold a worker.
 */
export function createWebhookSender(options: { fetch: typeof globalThis.fetch; timeoutMs: number }): WebhookSender {
  const { fetch, timeoutMs } = options;
  return {
    async send(request) {
      const signature = request.secrets.map((secret) => new Webhook(secret).sign(request.eventId, request.timestamp, request.body)).join(' ');
      const host = hostOf(request.url);
      const signal = AbortSignal.timeout(timeoutMs);
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      let response: Response;
      try {
        response = await fetch(request.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'Herald-Webhooks/1.0',
            'webhook-id': request.eventId,
            'webhook-timestamp': String(Math.floor(request.timestamp.getTime() / 1000)),
            'webhook-signature': signature,
          },
          body: request.body,
          signal,
        });
      } catch (thrown) {
        return { statusCode: null, latencyMs: elapsed(), error: failureMessage(thrown, host, timeoutMs), excerpt: null };
      }
      const latencyMs = elapsed();
      const excerpt = await readExcerpt(response);
      const { status } = response;
      if (status >= 200 && status < 300) return { statusCode: status, latencyMs, error: null, excerpt };
      const redirect = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
      return { statusCode: status, latencyMs, error: `The endpoint answered ${status}${redirect}`, excerpt };
    },
  };
}

function failureMessage(thrown: unknown, host: string, timeoutMs: number): string {
  if (thrown instanceof Error && thrown.name === 'UrlNotAllowedError') return thrown.message;
  if (thrown instanceof Error && (thrown.name === 'TimeoutError' || thrown.name === 'AbortError')) return `No answer within ${timeoutMs} ms`;
  return networkMessage(thrown, host);
}

/** Reads the first few KiB of the body (within the request's timeout) and drops the rest; null when empty or cut short. */
async function readExcerpt(response: Response): Promise<string | null> {
  if (response.body === null) return null;
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < EXCERPT_READ_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // The timeout or the receiver cut the body short: what arrived is the excerpt.
  } finally {
    reader.cancel().catch(() => undefined);
  }
  const text = Buffer.concat(chunks).toString('utf8').slice(0, EXCERPT_CHARACTERS);
  return text === '' ? null : text;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the endpoint';
  }
}
