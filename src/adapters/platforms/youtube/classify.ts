import { failed, type FailedOutcome } from '../http-outcomes.js';
import type { RestFailure } from '../rest-api.js';

/** What a call was for: the last chunk or the comment (their failure without an answer may have committed), media, or the rest. */
export type YouTubeStep = 'commit' | 'upload' | 'read';

/** Google's error body: `{error: {code, message, errors: [{domain, reason, message}]}}`. */
function reasonOf(body: unknown): { reason: string | null; message: string | null } {
  const error = typeof body === 'object' && body !== null ? (body as { error?: { message?: unknown; errors?: { reason?: unknown }[] } }).error : undefined;
  const reason = error?.errors?.[0]?.reason;
  return {
    reason: typeof reason === 'string' ? reason : null,
    message: typeof error?.message === 'string' && error.message !== '' ? error.message.slice(0, 500) : null,
  };
}

/** 403 reasons about the account or its grant (reference §6.4), not about this video or comment. */
const ACCOUNT_REASONS = new Set([
  'insufficientPermissions',
  'authError',
  'youtubeSignupRequired',
  'authenticatedUserAccountSuspended',
  'authenticatedUserAccountClosed',
]);

/** YouTube's daily quotas reset at midnight Pacific time. */
export function nextPacificMidnight(now: Date): Date {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: 'America/Los_Angeles',
    hourCycle: 'h23',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(now);
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const intoDay = ((part('hour') * 60 + part('minute')) * 60 + part('second')) * 1000 + now.getUTCMilliseconds();
  return new Date(now.getTime() - intoDay + 86_400_000);
}

/** YouTube's answer as Herald's outcome categories (reference §6.4). */
export function classify(failure: RestFailure, step: YouTubeStep, now: Date): FailedOutcome {
  const committing = step === 'commit';
  if (failure.kind === 'not_allowed') return failed('system_error', failure.message);
  if (failure.kind === 'network' || failure.kind === 'too_large')
    return failed('platform_error', failure.message, { retryable: true, mayHaveCommitted: committing });
  const { status, body } = failure;
  const { reason, message } = reasonOf(body);
  const because = `YouTube: ${message ?? `answered ${status}`}${reason === null ? '' : ` (${reason})`}`;
  if (reason === 'quotaExceeded' || reason === 'dailyLimitExceeded')
    return failed(
      'rate_limited',
      `${because}: the server's Google Cloud project has used its daily YouTube quota (100 uploads by default); it resets at midnight Pacific time`,
      {
        retryable: true,
        retryAfter: nextPacificMidnight(now),
      },
    );
  if (reason === 'uploadLimitExceeded')
    return failed('rate_limited', `${because}: the channel has uploaded as many videos as YouTube allows in 24 hours`, {
      retryable: true,
      retryAfter: new Date(now.getTime() + 86_400_000),
    });
  if (reason === 'rateLimitExceeded' || status === 429)
    return failed('rate_limited', because, { retryable: true, retryAfter: new Date(now.getTime() + 60_000) });
  if (status === 401) return failed('auth_expired', `${because}; connect the account again`, { credentialsRevoked: true });
  if (status === 403 && reason !== null && ACCOUNT_REASONS.has(reason))
    return failed('auth_expired', `${because}; connect the account again, granting upload and comments`, { credentialsRevoked: true });
  if (status >= 500) return failed('platform_error', because, { retryable: true, mayHaveCommitted: committing });
  return failed(step === 'upload' ? 'media_error' : 'user_content', because);
}
