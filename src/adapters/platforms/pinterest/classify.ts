import { failed, retryAfterHeader, type FailedOutcome } from '../http-outcomes.js';
import type { RestFailure } from '../rest-api.js';

/** What a call was for: the pin (its failure without an answer may have created it), media, or a read. */
export type PinterestStep = 'pin' | 'media' | 'read';

/** Pinterest's words from an error body (`{code, message}`), bounded. */
function said(body: unknown): { code: number | null; message: string | null } {
  const b = typeof body === 'object' && body !== null ? (body as { code?: unknown; message?: unknown }) : {};
  return { code: typeof b.code === 'number' ? b.code : null, message: typeof b.message === 'string' && b.message !== '' ? b.message.slice(0, 500) : null };
}

/** Pinterest's answer as Herald's outcome categories (reference §4.4). */
export function classify(failure: RestFailure, step: PinterestStep): FailedOutcome {
  const creating = step === 'pin';
  if (failure.kind === 'not_allowed') return failed('system_error', failure.message);
  if (failure.kind === 'network' || failure.kind === 'too_large')
    return failed('platform_error', failure.message, { retryable: true, mayHaveCommitted: creating });
  const { status, body, headers } = failure;
  const { code, message } = said(body);
  const because = message === null ? `Pinterest answered ${status}` : `Pinterest: ${message}`;
  if (code === 29)
    return failed(
      'system_error',
      `Pinterest has not granted the operator's app standard access (it has Trial access, whose pins Pinterest refuses in production): the operator must apply for standard access. ${because}`,
    );
  if (status === 401)
    return failed('auth_expired', 'Pinterest refused the access token (expired or revoked); connect the account again', { credentialsRevoked: true });
  if (status === 403) return failed('auth_expired', `${because}; connect the account again, granting the boards and pins scopes`, { credentialsRevoked: true });
  if (status === 429) return failed('rate_limited', because, { retryable: true, retryAfter: retryAfterHeader(headers) ?? new Date(Date.now() + 60_000) });
  if (status >= 500) return failed('platform_error', because, { retryable: true, mayHaveCommitted: creating });
  if (/unable to reach|url/i.test(message ?? '') && step === 'pin')
    return failed('media_error', `${because} (Pinterest fetches images from this server's public URL)`, { retryable: true });
  return failed(step === 'media' ? 'media_error' : 'user_content', because);
}
