import type { PublishHooks } from '../../../domain/ports/publisher.js';
import { ConnectError } from '../../../domain/ports/publisher.js';
import { failed, Halt } from '../http-outcomes.js';
import { consentCall, longLivedToken, type MetaUserToken } from './consent.js';
import type { GraphApi } from './graph.js';

/**
 * Instagram's and Threads' long-lived tokens last 60 days and can be refreshed only while alive and
 * at least a day old (reference §2.1, §4.1): Herald refreshes one in its last 30 days, through the
 * token source, so an account that publishes now and then never lapses.
 */
const RENEW_WITHIN_MS = 30 * 86_400_000;
const MIN_AGE_MS = 86_400_000;

/** Whether a token is due for a refresh: at least a day old, and in its last 30 days. */
export function renewalDue(token: MetaUserToken, now: Date): boolean {
  return now.getTime() - Date.parse(token.issuedAt) >= MIN_AGE_MS && Date.parse(token.expiresAt) - now.getTime() < RENEW_WITHIN_MS;
}

/** Refreshes a live token (`grant_type` ig_refresh_token or th_refresh_token on /refresh_access_token). */
export async function refreshedToken(api: GraphApi, platform: string, grantType: string, token: MetaUserToken, now: Date): Promise<MetaUserToken> {
  const answer = await consentCall<{ access_token?: unknown; expires_in?: unknown }>(
    api,
    { method: 'GET', path: '/refresh_access_token', params: { grant_type: grantType, access_token: token.accessToken }, token: null },
    platform,
    'to refresh the token',
  );
  return longLivedToken(answer, platform, now);
}

/**
 * The token to publish with: refused at once when it has ended (Meta cannot refresh it then),
 * refreshed first when due. A refresh Meta refuses ends the publication (connect again); one that
 * gets no answer leaves the current token, still valid, in use.
 */
export async function usableToken(
  platform: string,
  token: MetaUserToken,
  hooks: Pick<PublishHooks<MetaUserToken>, 'refreshCredentials'>,
  now: Date,
  refresh: (current: MetaUserToken) => Promise<MetaUserToken>,
): Promise<MetaUserToken> {
  if (Date.parse(token.expiresAt) <= now.getTime())
    throw new Halt(
      failed('auth_expired', `The ${platform} token ended on ${token.expiresAt} and cannot be refreshed; connect the account again`, {
        credentialsRevoked: true,
      }),
    );
  if (!renewalDue(token, now)) return token;
  try {
    return await hooks.refreshCredentials((current) => (renewalDue(current, now) ? refresh(current) : Promise.resolve(current)));
  } catch (error) {
    if (error instanceof ConnectError && error.reason === 'invalid_credentials')
      throw new Halt(failed('auth_expired', `${error.message}; connect the account again`, { credentialsRevoked: true }));
    return token;
  }
}
