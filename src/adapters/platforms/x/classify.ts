import { failed, retryAfterHeader, type FailedOutcome } from '../http-outcomes.js';
import type { XFailure } from './api.js';

/** Which call failed: a post's creation may have gone through when no answer came; an upload or a read never posts. */
export type XStep = 'post' | 'media' | 'read';

/** X's own words from an error body: RFC 7807 `detail`/`title`, or the older `errors[0].message`. */
export function xMessage(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const { detail, title, errors } = body as { detail?: unknown; title?: unknown; errors?: unknown };
  if (typeof detail === 'string' && detail !== '') return detail.slice(0, 500);
  const first = Array.isArray(errors) ? (errors[0] as { message?: unknown } | undefined) : undefined;
  if (typeof first?.message === 'string') return first.message.slice(0, 500);
  return typeof title === 'string' ? title.slice(0, 200) : null;
}

function problemTitle(body: unknown): string | null {
  const title = typeof body === 'object' && body !== null ? (body as { title?: unknown }).title : undefined;
  return typeof title === 'string' ? title : null;
}

/**
 * When X lets the account post again after a 429: the 24-hour user or app window when that one is
 * spent (x-user-limit-24hour-*, x-app-limit-24hour-*), else the 15-minute window
 * (x-rate-limit-reset, epoch seconds), else Retry-After.
 */
export function xRetryAfter(headers: Headers): Date | null {
  for (const window of ['x-user-limit-24hour', 'x-app-limit-24hour']) {
    const reset = Number(headers.get(`${window}-reset`));
    if (headers.get(`${window}-remaining`) === '0' && Number.isFinite(reset) && reset > 0) return new Date(reset * 1000);
  }
  const reset = Number(headers.get('x-rate-limit-reset'));
  if (Number.isFinite(reset) && reset > 0) return new Date(reset * 1000);
  return retryAfterHeader(headers);
}

/** Whether X refused the text as a duplicate of an earlier post (403, no id given: a signal, never proof). */
export function isDuplicate(failure: XFailure): boolean {
  return failure.kind === 'http' && failure.status === 403 && /duplicate content/i.test(xMessage(failure.body) ?? '');
}

/** X's answer as Herald's outcome categories (reference §2.4). */
export function classify(failure: XFailure, step: XStep): FailedOutcome {
  const posting = step === 'post';
  if (failure.kind === 'not_allowed') return failed('system_error', failure.message);
  if (failure.kind === 'network' || failure.kind === 'too_large')
    return failed('platform_error', failure.message, { retryable: true, mayHaveCommitted: posting });
  const { status, body, headers } = failure;
  const said = xMessage(body);
  const because = said === null ? `X answered ${status}` : `X: ${said}`;
  if (status === 401) return failed('auth_expired', 'X refused the access token; connect the account again', { credentialsRevoked: true });
  if (status === 402) {
    return failed(
      'platform_error',
      "X refused the call: the operator's X developer account has no credits left (CreditsDepleted); buy credits in the X developer console, then retry the post",
    );
  }
  if (status === 429) {
    const capped = problemTitle(body) === 'UsageCapExceeded' || /usage-capped/.test(JSON.stringify(body ?? ''));
    const message = capped ? "X refused the call: the X app's usage cap for the period is reached" : 'X rate limit reached';
    return failed('rate_limited', message, { retryable: true, retryAfter: xRetryAfter(headers) });
  }
  if (status >= 500) return failed('platform_error', because, { retryable: true, mayHaveCommitted: posting });
  if (status === 403) {
    if (/Authenticating with Unknown is forbidden/i.test(said ?? '')) return failed('platform_error', because, { retryable: true });
    if (problemTitle(body) === 'Client Forbidden' || /client-forbidden/.test(JSON.stringify(body ?? ''))) {
      return failed('auth_expired', 'X refused the app for this account (missing scopes or app access); connect the account again', {
        credentialsRevoked: true,
      });
    }
    return failed('user_content', isDuplicate(failure) ? 'X refused a duplicate of an earlier post' : because);
  }
  if (step === 'media') return failed('media_error', because);
  return failed('user_content', because);
}
