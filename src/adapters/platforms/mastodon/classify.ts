import { failed, retryAfterHeader, type FailedOutcome } from '../http-outcomes.js';
import { ConnectError } from '../../../domain/ports/publisher.js';
import { hostOf, type RestFailure } from './rest.js';

/**
 * Where a failure happened, which decides whether the post may exist now:
 * - `media`: uploading or waiting for media, before any status is written;
 * - `status`: POST /api/v1/statuses, which may have committed when no answer came back.
 */
export type Step = 'media' | 'status';

/** A failed call as the domain sees it (publishing-notes C3: the status code is what matters). */
export function classify(failure: RestFailure, step: Step, instance: string): FailedOutcome {
  const mayHaveCommitted = step === 'status';
  if (failure.kind === 'not_allowed') return failed('platform_error', failure.message);
  // An answer too large to read is no answer: the status may have been written.
  if (failure.kind === 'network' || failure.kind === 'too_large') return failed('platform_error', failure.message, { retryable: true, mayHaveCommitted });
  const message = failure.error ?? `${hostOf(instance)} answered ${failure.status}`;
  if (failure.status === 429) return failed('rate_limited', message, { retryable: true, retryAfter: resetOf(failure.headers) });
  if (failure.status >= 500 || failure.status < 400) return failed('platform_error', message, { retryable: true, mayHaveCommitted });
  if (failure.status === 401)
    return failed('auth_expired', `Mastodon refused the access token: ${message}; reconnect the account`, { credentialsRevoked: true });
  // A suspended, disabled or unapproved account: a person must act on the instance, a new token would not help.
  if (failure.status === 403) return failed('auth_expired', message);
  if (failure.status === 413 || step === 'media') return failed('media_error', message);
  // "Cannot attach files that have not finished processing. Try again in a moment!": so it is retried.
  if (failure.status === 422) return /processing/i.test(message) ? failed('media_error', message, { retryable: true }) : failed('user_content', message);
  return failed('platform_error', message);
}

/** X-RateLimit-Reset is an ISO 8601 timestamp on Mastodon; else Retry-After. */
function resetOf(headers: Headers): Date | null {
  const reset = headers.get('x-ratelimit-reset');
  const at = reset === null ? NaN : Date.parse(reset);
  return Number.isNaN(at) ? retryAfterHeader(headers) : new Date(at);
}

export function connectError(failure: RestFailure, instance: string): ConnectError {
  if (failure.kind === 'not_allowed') return new ConnectError('url_not_allowed', failure.message);
  if (failure.kind === 'network') return new ConnectError('unreachable', failure.message);
  if (failure.kind === 'too_large') return new ConnectError('bad_answer', failure.message);
  if (failure.status >= 500 || failure.status === 429) return new ConnectError('unreachable', `${hostOf(instance)} answered ${failure.status}`);
  if (failure.status === 401 || failure.status === 403) {
    return new ConnectError('invalid_credentials', `Mastodon refused the access token${failure.error === null ? '' : `: ${failure.error}`}`);
  }
  return new ConnectError('invalid_credentials', `${hostOf(instance)} does not look like a Mastodon instance (it answered ${failure.status})`);
}
