import { failed, type FailedOutcome } from '../http-outcomes.js';
import type { TikTokAnswer } from './api.js';

/** The last chunk or a pull init (their failure without an answer may have published), or anything else. */
export type TikTokStep = 'commit' | 'other';

const DAY_MS = 86_400_000;

/** TikTok's error codes and fail reasons as Herald's outcome categories (reference §5.4). */
export function classify(answer: Exclude<TikTokAnswer<unknown>, { ok: true }>, step: TikTokStep, now: Date): FailedOutcome {
  if (answer.network !== null) return failed('platform_error', answer.network, { retryable: true, mayHaveCommitted: step === 'commit' });
  const code = answer.code ?? `HTTP ${answer.status ?? '?'}`;
  const said = `TikTok: ${answer.message !== null && answer.message !== '' ? `${answer.message.slice(0, 300)} ` : ''}(${code})`;
  switch (answer.code ?? '') {
    case 'access_token_invalid':
    case 'scope_not_authorized':
    case 'scope_permission_missed':
      return failed('auth_expired', `${said}; connect the account again`, { credentialsRevoked: true });
    case 'rate_limit_exceeded':
      return failed('rate_limited', said, { retryable: true, retryAfter: new Date(now.getTime() + 60_000) });
    case 'spam_risk_too_many_posts':
    case 'spam_risk_too_many_pending_share':
    case 'reached_active_user_cap':
      return failed('rate_limited', `${said}: TikTok's daily limit`, { retryable: true, retryAfter: new Date(now.getTime() + DAY_MS) });
    case 'unaudited_client_can_only_post_to_private_accounts':
      return failed(
        'system_error',
        `${said}: the operator's TikTok app has not passed TikTok's audit, so it may post only as SELF_ONLY to private accounts (at most 5 users a day)`,
      );
    case 'url_ownership_unverified':
      return failed('system_error', `${said}: the operator must verify the domain of HERALD_PUBLIC_URL in the TikTok developer portal`);
    case 'privacy_level_option_mismatch':
    case 'spam_risk_user_banned_from_posting':
    case 'spam_risk_text':
    case 'spam_risk':
      return failed('user_content', said);
    case 'invalid_file_upload':
      return failed('media_error', said);
    default:
      if (answer.status !== null && answer.status >= 500) return failed('platform_error', said, { retryable: true, mayHaveCommitted: step === 'commit' });
      if (answer.status === 401) return failed('auth_expired', `${said}; connect the account again`, { credentialsRevoked: true });
      return failed('platform_error', said);
  }
}

/** A FAILED publish's reason (`fail_reason`) as an outcome: TikTok's checks of the file, a pull that failed, or the rest. */
export function failedPublish(reason: string | null): FailedOutcome {
  const why = reason ?? 'no reason given';
  if (/_check_failed$|^file_format|pull_failed$/.test(why)) return failed('media_error', `TikTok could not publish the media (${why})`);
  if (why.startsWith('spam_risk')) return failed('user_content', `TikTok refused the post (${why})`);
  return failed('platform_error', `TikTok could not publish the post (${why})`);
}
