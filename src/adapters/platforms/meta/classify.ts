import { failed, type FailedOutcome } from '../http-outcomes.js';
import { regainAccessAt, type GraphFailure, type MetaError } from './graph.js';

/**
 * What a call was for: reading (status, lists, limits), creating a container or uploading, the call
 * that makes a post live (its failure without an answer may have published), or a comment.
 */
export type MetaStep = 'read' | 'create' | 'commit' | 'comment';

/** Codes Meta throttles with (reference §1.3): app, user, Page, custom, application; BUC 80000–80014; Pages' "posting too fast". */
const THROTTLE_CODES = new Set([4, 17, 32, 341, 613, 1390008]);
/** Token codes (§1.2): 190 and 102, and the subcodes of an account the owner must act on. */
const TOKEN_CODES = new Set([102, 190, 490]);
const OWNER_ACTION_SUBCODES = new Set([2207050, 1404078, 4854002, 1404112, 459, 464]);
/** Instagram's media codes (§2.4): fetch, size, format, aspect, expired, processing; also code 352 (video format) and 6000 (Facebook's video upload errors). */
const MEDIA_SUBCODES = new Set([2207003, 2207004, 2207005, 2207009, 2207020, 2207026, 2207052, 2207006, 1366046, 2069019]);
/** Of those, where a new container usually succeeds (a slow fetch, an expired container). */
const MEDIA_RETRY_SUBCODES = new Set([2207003, 2207020]);
/** Instagram's server-side failures where a new container usually succeeds (§2.4). */
const PLATFORM_RETRY_SUBCODES = new Set([2207001, 2207032, 2207053, 2207008]);
/** What the person's content is refused for (§2.4, §3.4, §4.4). */
const CONTENT_SUBCODES = new Set([
  2207010, 2207023, 2207028, 2207035, 2207036, 2207037, 2207040, 2207057, 2207051, 4279013, 1346003, 1404102, 1609008, 2061006,
]);

/**
 * Meta's answer as Herald's outcome categories (reference §2.4, §3.4, §4.4). `mediaUrl` names the
 * public URL Meta was given, so a fetch failure says which URL Meta could not read.
 */
export function classify(platform: string, failure: GraphFailure, step: MetaStep, now: Date, mediaUrl?: string): FailedOutcome {
  const committing = step === 'commit';
  if (failure.kind === 'not_allowed') return failed('system_error', failure.message);
  if (failure.kind === 'network' || failure.kind === 'too_large')
    return failed('platform_error', failure.message, { retryable: true, mayHaveCommitted: committing });
  const { status, error, headers } = failure;
  if (error === null) {
    if (status >= 500) return failed('platform_error', `${platform} answered ${status}`, { retryable: true, mayHaveCommitted: committing });
    return failed('platform_error', `${platform} answered ${status} without saying why`);
  }
  const said = `${platform}: ${error.userMessage ?? error.message}${codes(error)}`;
  const { code, subcode } = error;
  if (operatorsApp(error)) return failed('auth_expired', operatorMessage(platform, error));
  if ((code !== null && TOKEN_CODES.has(code)) || (subcode !== null && OWNER_ACTION_SUBCODES.has(subcode)))
    return failed('auth_expired', `${said}; connect the account again`, { credentialsRevoked: true });
  if (subcode === 2207042 || (code === 9 && subcode === null))
    return failed('rate_limited', `${said} (the account's daily publishing limit)`, { retryable: true, retryAfter: new Date(now.getTime() + 3_600_000) });
  if ((code !== null && (THROTTLE_CODES.has(code) || (code >= 80000 && code <= 80014))) || error.message.includes('THREADS_API__PUBLISH_LIMIT'))
    return failed('rate_limited', said, { retryable: true, retryAfter: regainAccessAt(headers, now) ?? new Date(now.getTime() + 3_600_000) });
  if (subcode === 2207052 || code === 9004)
    return failed('media_error', `${platform} could not fetch the media from ${mediaUrl ?? 'the URL Herald gave'}${codes(error)}: ${error.message}`);
  if ((subcode !== null && MEDIA_SUBCODES.has(subcode)) || code === 352 || code === 6000)
    return failed('media_error', said, { retryable: subcode !== null && MEDIA_RETRY_SUBCODES.has(subcode) });
  if (subcode !== null && PLATFORM_RETRY_SUBCODES.has(subcode)) return failed('platform_error', said, { retryable: true });
  if ((subcode !== null && CONTENT_SUBCODES.has(subcode)) || code === 368 || code === 506 || error.message.includes('THREADS_API__'))
    return failed('user_content', said);
  if (code === 1 || code === 2 || error.transient || status >= 500) return failed('platform_error', said, { retryable: true, mayHaveCommitted: committing });
  // Meta's intermittent "does not exist" on reads of containers and permalinks (§2.4).
  if (code === 100 && subcode === 33 && step === 'read') return failed('platform_error', said, { retryable: true });
  return failed(step === 'create' ? 'user_content' : 'platform_error', said);
}

/** Meta's codes, for the person who reports it, and the trace id Meta's support asks for. */
function codes(error: MetaError): string {
  const parts = [error.code === null ? null : `code ${error.code}`, error.subcode === null ? null : `subcode ${error.subcode}`];
  const trace = error.fbtraceId === null ? '' : `, fbtrace_id ${error.fbtraceId}`;
  const listed = parts.filter((p) => p !== null).join('/');
  return listed === '' && trace === '' ? '' : ` (${listed}${trace})`;
}

/**
 * The operator's Meta app, not the account, is at fault: a permission it lacks or was not granted
 * (code 10, 200–299), or the app in Development mode or not live.
 */
function operatorsApp(error: MetaError): boolean {
  const { code } = error;
  return code === 10 || (code !== null && code >= 200 && code <= 299) || /development mode|app not active|not live/i.test(error.message);
}

function operatorMessage(platform: string, error: MetaError): string {
  const mode = /development mode|app not active|not live/i.test(error.message);
  const what = mode
    ? "the server's Meta app is in Development mode or not live, so it may not publish for this account"
    : "the server's Meta app lacks a permission it needs, or the person did not grant it";
  return `${platform} refused: ${what}. The operator must fix the app in the Meta App Dashboard (see the README), then the account connects again. Meta said: ${error.message}${codes(error)}`;
}
