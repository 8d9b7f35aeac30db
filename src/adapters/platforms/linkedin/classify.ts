import { failed, type FailedOutcome } from '../http-outcomes.js';
import type { LinkedInFailure } from './api.js';

export type LinkedInStep = 'post' | 'comment' | 'media';

/** LinkedIn's own words from an error body (`message`), bounded. */
export function linkedInMessage(body: unknown): string | null {
  const message = typeof body === 'object' && body !== null ? (body as { message?: unknown }).message : undefined;
  return typeof message === 'string' && message !== '' ? message.slice(0, 500) : null;
}

/** The URN of the post LinkedIn says this one duplicates (422 DUPLICATE_POST), or null. */
export function duplicateOf(failure: LinkedInFailure): string | null {
  if (failure.kind !== 'http' || failure.status !== 422) return null;
  const body = failure.body as { errorDetails?: { inputErrors?: { code?: unknown }[] } } | undefined;
  const duplicate = body?.errorDetails?.inputErrors?.some((e) => e.code === 'DUPLICATE_POST') === true;
  const urn = /urn:li:(?:share|ugcPost):[0-9]+/.exec(linkedInMessage(failure.body) ?? '')?.[0];
  return duplicate && urn !== undefined ? urn : null;
}

/** LinkedIn's answer as Herald's outcome categories (reference §3.4). */
export function classify(failure: LinkedInFailure, step: LinkedInStep, version: string): FailedOutcome {
  const creating = step !== 'media';
  if (failure.kind === 'not_allowed') return failed('system_error', failure.message);
  if (failure.kind === 'network' || failure.kind === 'too_large')
    return failed('platform_error', failure.message, { retryable: true, mayHaveCommitted: creating });
  const { status, body } = failure;
  const said = linkedInMessage(body);
  const because = said === null ? `LinkedIn answered ${status}` : `LinkedIn: ${said}`;
  if (status === 401)
    return failed('auth_expired', 'LinkedIn refused the access token (expired or revoked); connect the account again', { credentialsRevoked: true });
  if (status === 403)
    return failed('auth_expired', `LinkedIn refused the app for this member (${said ?? 'not enough permissions'}); connect the account again`, {
      credentialsRevoked: true,
    });
  if (status === 426)
    return failed('system_error', `LinkedIn no longer serves API version ${version}; the operator must set HERALD_LINKEDIN_VERSION to a current one (YYYYMM)`);
  if (status === 429)
    return failed('rate_limited', "LinkedIn's daily limit for this app or member is reached; it resets at midnight UTC", {
      retryable: true,
      retryAfter: nextMidnightUtc(),
    });
  if (status >= 500) return failed('platform_error', because, { retryable: true, mayHaveCommitted: creating });
  if (duplicateOf(failure) !== null) return failed('user_content', `LinkedIn refused a duplicate of an earlier post (${duplicateOf(failure)})`);
  return failed(step === 'media' ? 'media_error' : 'user_content', because);
}

/** LinkedIn gives no reset header: its daily limits reset at 00:00 UTC. */
function nextMidnightUtc(): Date {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}
