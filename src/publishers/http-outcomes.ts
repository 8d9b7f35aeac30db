import type { PublishOutcome } from './publisher.js';

/** What every platform client shares: how a failure reads, and how an answer that is no answer is named. */

export type FailedOutcome = Extract<PublishOutcome, { kind: 'failed' }>;

export function failed(category: FailedOutcome['category'], message: string, fields: Partial<Omit<FailedOutcome, 'kind' | 'category' | 'message'>> = {}): FailedOutcome {
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
