import { AnswerTooLargeError, formatBytes } from '../net/bounded-body.js';
import { networkMessage } from '../net/network-message.js';
import type { MediaToPublish, PublishOutcome, Reconciliation } from '../../domain/ports/publisher.js';
import { readRange, type ByteRange } from './chunked-upload.js';

/** What every platform client shares: how a failure reads, and how an answer that is no answer is named. */

export type FailedOutcome = Extract<PublishOutcome, { kind: 'failed' }>;

export function failed(
  category: FailedOutcome['category'],
  message: string,
  fields: Partial<Omit<FailedOutcome, 'kind' | 'category' | 'message'>> = {},
): FailedOutcome {
  return { kind: 'failed', category, message, retryable: false, retryAfter: null, mayHaveCommitted: false, credentialsRevoked: false, ...fields };
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Retry-After: seconds from now, or an HTTP date. */
export function retryAfterHeader(headers: Headers): Date | null {
  const after = headers.get('retry-after');
  if (after === null) return null;
  const seconds = Number(after);
  if (Number.isFinite(seconds) && seconds >= 0) return new Date(Date.now() + seconds * 1000);
  const date = new Date(after);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** A call that got no usable answer. */
export type NoAnswer =
  /** Refused connection, DNS failure, reset, timeout. */
  | { kind: 'network'; message: string }
  /** An answer larger than the client reads (decompressed): cut off unread. */
  | { kind: 'too_large'; message: string }
  /** The SSRF guard refused the URL before anything was sent. */
  | { kind: 'not_allowed'; message: string };

/** What a thrown fetch (or bounded read) means, naming the host at most. */
export function noAnswer(thrown: unknown, host: string): NoAnswer {
  if (thrown instanceof Error && thrown.name === 'UrlNotAllowedError') return { kind: 'not_allowed', message: thrown.message };
  if (thrown instanceof AnswerTooLargeError) return { kind: 'too_large', message: `${host} sent an answer larger than ${formatBytes(thrown.limitBytes)}` };
  return { kind: 'network', message: networkMessage(thrown, host) };
}

/** Ends a publication with an outcome from anywhere inside it. */
export class Halt extends Error {
  constructor(readonly outcome: FailedOutcome) {
    super(outcome.message);
    this.name = 'Halt';
  }
}

/** What a publication that threw ends as: its Halt's outcome, or a retryable system error that names no detail. */
export function outcomeOfThrown(thrown: unknown, platform: string): FailedOutcome {
  return thrown instanceof Halt ? thrown.outcome : failed('system_error', `Herald failed while publishing to ${platform}`, { retryable: true });
}

/**
 * What a Halt met while asking the platform about a part in doubt means: ask again at the next
 * attempt when it was transient, else a person decides. Anything else is rethrown.
 */
export function reconciliationOfThrown(thrown: unknown): Reconciliation {
  if (!(thrown instanceof Halt)) throw thrown;
  return { kind: thrown.outcome.retryable ? 'unanswered' : 'cannot_tell', message: thrown.outcome.message };
}

/** A media file's bytes, whole or one range of them; a file storage cannot give ends the publication, to be retried. */
export async function readMedia(media: Pick<MediaToPublish, 'id' | 'open' | 'bytes'>, range: ByteRange = { start: 0, end: media.bytes - 1 }): Promise<Buffer> {
  try {
    return await readRange(media, range);
  } catch {
    throw new Halt(failed('system_error', `Media ${media.id} could not be read from storage`, { retryable: true }));
  }
}
