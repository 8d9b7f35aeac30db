import { createRestApi, type RestApi, type RestFailure, type RestResult } from '../rest-api.js';
import { onBase, type OAuthPlatform, type OAuthTokens } from '../oauth.js';
import { ConnectError } from '../../../domain/ports/publisher.js';

/**
 * X API v2 as documented (docs.x.com/x-api, OpenAPI v2.167; reference notes in
 * shared/reference/platform-apis-x-linkedin-pinterest-reddit.md §2): the consent page on x.com, the
 * token and every API call on api.x.com. HERALD_X_BASE_URL replaces both origins.
 */
export const X_ENDPOINTS = {
  authorize: 'https://x.com/i/oauth2/authorize',
  token: 'https://api.x.com/2/oauth2/token',
  revoke: 'https://api.x.com/2/oauth2/revoke',
  api: 'https://api.x.com',
} as const;

/** What posting needs: tweet.write with tweet.read and users.read, media.write for uploads, offline.access for a refresh token. */
export const X_SCOPES = ['tweet.read', 'tweet.write', 'users.read', 'media.write', 'offline.access'] as const;

export type XFailure = RestFailure;
export type XResult<T> = RestResult<T>;
export type XApi = RestApi;

/** Calls to X over the injected fetch; nothing the network or X does is thrown, every answer is a value. */
export function createXApi(fetch: typeof globalThis.fetch, baseUrl: string | undefined): XApi {
  return createRestApi(fetch, onBase(X_ENDPOINTS.api, baseUrl));
}

/** X's OAuth 2.0 with PKCE, a confidential client (HTTP Basic at the token endpoint); the account from GET /2/users/me. */
export function xOAuth(api: XApi): OAuthPlatform {
  return {
    displayName: 'X',
    endpoints: { authorize: X_ENDPOINTS.authorize, token: X_ENDPOINTS.token, revoke: X_ENDPOINTS.revoke },
    scopes: X_SCOPES,
    pkce: true,
    clientAuth: 'basic',
    async identify(tokens: OAuthTokens) {
      const me = await api<{ data?: { id?: unknown; username?: unknown; name?: unknown } }>(
        { method: 'GET', path: '/2/users/me', timeoutMs: 30_000 },
        tokens.accessToken,
      );
      if (!me.ok) {
        if (me.failure.kind === 'http' && me.failure.status < 500 && me.failure.status !== 429)
          throw new ConnectError('invalid_credentials', `X refused to say who the account is (${me.failure.status})`);
        throw new ConnectError(
          'unreachable',
          me.failure.kind === 'http' ? `X answered ${me.failure.status} when asked who the account is` : me.failure.message,
        );
      }
      const { id, username, name } = me.data.data ?? {};
      if (typeof id !== 'string' || typeof username !== 'string') throw new ConnectError('bad_answer', 'X answered an account Herald cannot read');
      return { platformUserId: id, username, displayName: typeof name === 'string' && name !== '' ? name : null };
    },
  };
}
