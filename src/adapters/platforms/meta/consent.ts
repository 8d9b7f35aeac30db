import type { ConsentStart, OAuthConsent } from '../../../domain/ports/oauth.js';
import { ConnectError } from '../../../domain/ports/publisher.js';
import type { OAuthApp } from '../oauth.js';
import type { GraphApi, GraphCall } from './graph.js';

/**
 * What Meta's three consent flows share (Facebook Login, Instagram Business Login, Threads Login:
 * reference §2.1, §3.1, §4.1): a consent page taking comma-separated scopes and no PKCE, then token
 * exchanges whose answers carry no `token_type` (so a generic OAuth client refuses them).
 */

/** The longest a token exchange or identity call may take. */
export const TOKEN_CALL_TIMEOUT_MS = 30_000;

/** A Meta user token (Instagram, Threads): long-lived, refreshed before it ends, never after. */
export interface MetaUserToken {
  accessToken: string;
  /** ISO 8601. */
  expiresAt: string;
  /** ISO 8601: Meta refreshes only a token at least 24 hours old. */
  issuedAt: string;
}

export function consentPage(authorize: string, app: OAuthApp, scopes: readonly string[], state: string, redirectUri: string): ConsentStart {
  const url = new URL(authorize);
  url.searchParams.set('client_id', app.clientId);
  url.searchParams.set('redirect_uri', redirectUri);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', scopes.join(','));
  url.searchParams.set('state', state);
  return { authorizationUrl: url.toString(), codeVerifier: null };
}

/** Meta appends `#_` to the redirect; a code copied with it is the code without it. */
export function codeOf(given: string): string {
  return given.replace(/#_$/, '');
}

/**
 * One call of a consent (an exchange, who the account is): its answer, or a ConnectError whose
 * message names Meta's error, never a token or the app's secret.
 */
export async function consentCall<T>(api: GraphApi, call: Omit<GraphCall, 'timeoutMs'>, platform: string, what: string): Promise<T> {
  const result = await api<T>({ ...call, timeoutMs: TOKEN_CALL_TIMEOUT_MS });
  if (result.ok) return result.data;
  const { failure } = result;
  if (failure.kind === 'not_allowed') throw new ConnectError('url_not_allowed', failure.message);
  if (failure.kind !== 'http') throw new ConnectError('unreachable', `${platform} could not be reached: ${failure.message}`);
  if (failure.status >= 500) throw new ConnectError('unreachable', `${platform} answered ${failure.status} to ${what}`);
  const said = failure.error === null ? `${failure.status}` : `${failure.error.message}${failure.error.code === null ? '' : ` (code ${failure.error.code})`}`;
  throw new ConnectError('invalid_credentials', `${platform} refused ${what}: ${said}`);
}

/** A long-lived token answer (`{access_token, token_type, expires_in}`), as the credentials to keep. */
export function longLivedToken(answer: { access_token?: unknown; expires_in?: unknown }, platform: string, now: Date): MetaUserToken {
  if (typeof answer.access_token !== 'string' || answer.access_token === '')
    throw new ConnectError('bad_answer', `${platform} answered a token exchange Herald cannot read`);
  // Meta documents about 60 days; an answer without a lifetime is taken as that.
  const seconds = typeof answer.expires_in === 'number' && answer.expires_in > 0 ? answer.expires_in : 60 * 86_400;
  return { accessToken: answer.access_token, expiresAt: new Date(now.getTime() + seconds * 1000).toISOString(), issuedAt: now.toISOString() };
}

/**
 * The code exchange's answer: `{access_token, user_id}` (Threads, older Instagram) or
 * `{data: [{access_token, user_id, permissions}]}` (Instagram Business Login today).
 */
export function shortLivedToken(answer: unknown, platform: string): { accessToken: string; userId: string | null } {
  const flat = typeof answer === 'object' && answer !== null ? (answer as { data?: unknown }) : {};
  const entry = (Array.isArray(flat.data) ? (flat.data[0] as unknown) : flat) as { access_token?: unknown; user_id?: unknown } | undefined;
  if (typeof entry?.access_token !== 'string' || entry.access_token === '')
    throw new ConnectError('bad_answer', `${platform} answered the code exchange with something Herald cannot use`);
  const userId = typeof entry.user_id === 'string' || typeof entry.user_id === 'number' ? String(entry.user_id) : null;
  return { accessToken: entry.access_token, userId };
}

/** What an Instagram or Threads login needs beyond what the two share. */
export interface UserTokenLogin {
  platform: string;
  /** The consent page, its origin already the configured one. */
  authorize: string;
  scopes: readonly string[];
  /** Where `POST /oauth/access_token` takes the code (api.instagram.com; graph.threads.net). */
  exchange: GraphApi;
  /** Where `/access_token` makes the token long-lived, and the account is read. */
  graph: GraphApi;
  /** `ig_exchange_token` or `th_exchange_token`. */
  longLivedGrant: string;
  /** Who the account is, read with the long-lived token; the code exchange's user id, where it gave one. */
  identify(accessToken: string, exchangedUserId: string | null): Promise<{ id: string; username: string; name: string | null }>;
}

/**
 * The consent both Instagram Login and Threads Login are: the code for a short-lived token, that
 * for a 60-day one, then who the account is; the account ends with its token unless refreshed.
 * Neither offers a revocation call: the person removes the app in the platform's settings.
 */
export function userTokenConsent(login: UserTokenLogin, app: OAuthApp): OAuthConsent {
  const { platform } = login;
  return {
    begin: (state, redirectUri) => Promise.resolve(consentPage(login.authorize, app, login.scopes, state, redirectUri)),
    async finish(code, _verifier, redirectUri) {
      const short = shortLivedToken(
        await consentCall<unknown>(
          login.exchange,
          {
            method: 'POST',
            path: '/oauth/access_token',
            params: {
              client_id: app.clientId,
              client_secret: app.clientSecret,
              grant_type: 'authorization_code',
              redirect_uri: redirectUri,
              code: codeOf(code),
            },
            token: null,
          },
          platform,
          'the code exchange',
        ),
        platform,
      );
      const long = longLivedToken(
        await consentCall(
          login.graph,
          {
            method: 'GET',
            path: '/access_token',
            params: { grant_type: login.longLivedGrant, client_secret: app.clientSecret, access_token: short.accessToken },
            token: null,
          },
          platform,
          'the long-lived token exchange',
        ),
        platform,
        new Date(),
      );
      const who = await login.identify(long.accessToken, short.userId);
      return [{ platformUserId: who.id, username: who.username, displayName: who.name, credentials: long, endsAt: new Date(long.expiresAt) }];
    },
    revoke: () => Promise.resolve(),
  };
}

/** A profile answer's `name`, when it is one. */
export function nameOf(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}
