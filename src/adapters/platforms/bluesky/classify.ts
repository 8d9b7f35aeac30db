import { failed, retryAfterHeader, type FailedOutcome } from '../http-outcomes.js';
import { ConnectError } from '../../../domain/ports/publisher.js';
import { hostOf, type XrpcFailure } from './xrpc.js';

/**
 * Where a failure happened, which decides whether the post may exist now:
 * - `upload`: before any write (uploadBlob, handle lookups);
 * - `write`: putRecord, which may have committed when no answer came back;
 * - `read`: getRecord after the PDS said the record exists, so it does.
 */
export type Step = 'upload' | 'write' | 'read';

/** Errors a refresh can fix: the access token is expired or not accepted. */
export function isTokenError(failure: XrpcFailure): boolean {
  return failure.kind === 'http' && (failure.error === 'ExpiredToken' || failure.error === 'InvalidToken');
}

const ACCOUNT_GONE = new Set(['AccountTakedown', 'AccountDeactivated']);

/** A failed call to the PDS as the domain sees it (publishing-notes A1, A7, A8). */
export function classify(failure: XrpcFailure, step: Step, service: string): FailedOutcome {
  const mayHaveCommitted = step !== 'upload';
  if (failure.kind === 'not_allowed') return failed('platform_error', failure.message);
  // An answer too large to read is no answer: the record may have been written.
  if (failure.kind === 'network' || failure.kind === 'too_large') return failed('platform_error', failure.message, { retryable: true, mayHaveCommitted });
  const message = failure.message ?? `${hostOf(service)} answered ${failure.status}${failure.error === null ? '' : ` ${failure.error}`}`;
  if (failure.status === 429) {
    return failed('rate_limited', message, { retryable: true, retryAfter: retryAfter(failure.headers) });
  }
  // A 501 says the method is not implemented: retrying cannot help. A success status with a body
  // that is not JSON is as unknown as a 5xx.
  if (failure.status === 501) return failed('platform_error', message);
  if (failure.status >= 500 || failure.status < 400) return failed('platform_error', message, { retryable: true, mayHaveCommitted });
  if (failure.error !== null && ACCOUNT_GONE.has(failure.error)) return failed('auth_expired', message, { credentialsRevoked: true });
  // Only reached once a refresh has been spent: the platform refuses even fresh tokens.
  if (isTokenError(failure)) return failed('auth_expired', message, { credentialsRevoked: true });
  if (failure.status === 413 || failure.error === 'BlobTooLarge' || step === 'upload') return failed('media_error', message);
  if (failure.error === 'InvalidRequest') return failed('user_content', message);
  return failed('platform_error', message);
}

/** refreshSession's answer: a refused refresh token means a reconnect; anything transient is retried. */
export function classifyRefresh(failure: XrpcFailure, service: string): FailedOutcome {
  if (failure.kind === 'http' && (isTokenError(failure) || (failure.error !== null && ACCOUNT_GONE.has(failure.error)) || failure.status === 401)) {
    return failed('auth_expired', `Bluesky refused the stored session (${failure.message ?? failure.error ?? failure.status}); reconnect the account`, {
      credentialsRevoked: true,
    });
  }
  return classify(failure, 'upload', service);
}

export function connectError(failure: XrpcFailure, service: string): ConnectError {
  if (failure.kind === 'not_allowed') return new ConnectError('url_not_allowed', failure.message);
  if (failure.kind === 'network') return new ConnectError('unreachable', failure.message);
  if (failure.kind === 'too_large') return new ConnectError('bad_answer', failure.message);
  if (failure.status >= 500 || failure.status === 429) {
    return new ConnectError('unreachable', `${hostOf(service)} answered ${failure.status}${failure.message === null ? '' : `: ${failure.message}`}`);
  }
  if (failure.error === null) {
    return new ConnectError('invalid_credentials', `${hostOf(service)} does not look like a Bluesky service (it answered ${failure.status})`);
  }
  if (ACCOUNT_GONE.has(failure.error)) return new ConnectError('invalid_credentials', failure.message ?? failure.error);
  return new ConnectError('invalid_credentials', 'Bluesky refused the identifier or app password');
}

/** RateLimit-Reset is unix seconds (the PDS's header); else Retry-After. */
function retryAfter(headers: Headers): Date | null {
  const reset = Number(headers.get('ratelimit-reset') ?? NaN);
  if (Number.isFinite(reset) && reset > 0) return new Date(reset * 1000);
  return retryAfterHeader(headers);
}
