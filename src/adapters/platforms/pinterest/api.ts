import { ConnectError } from '../../../domain/ports/publisher.js';
import { onBase, type OAuthPlatform, type OAuthTokens } from '../oauth.js';
import { createRestApi, type RestApi } from '../rest-api.js';

/**
 * Pinterest API v5 as documented (developers.pinterest.com/docs/api/v5: getting-started/
 * authentication-and-scopes, oauth/token, pins/create, media/create, media/get, boards/list_pins,
 * user_account/get; reference notes in shared/reference/platform-apis-x-linkedin-pinterest-reddit.md
 * §4): the consent page on www.pinterest.com, tokens and the API on api.pinterest.com; video bytes
 * go to the upload URL Pinterest gives. HERALD_PINTEREST_BASE_URL replaces both origins.
 */
export const PINTEREST_ENDPOINTS = {
  authorize: 'https://www.pinterest.com/oauth/',
  token: 'https://api.pinterest.com/v5/oauth/token',
  revoke: 'https://api.pinterest.com/v5/oauth/token/revoke',
  api: 'https://api.pinterest.com',
} as const;

/** Creating pins needs the board and pin scopes; the profile needs user_accounts:read. */
export const PINTEREST_SCOPES = ['boards:read', 'boards:write', 'pins:read', 'pins:write', 'user_accounts:read'] as const;

export function createPinterestApi(fetch: typeof globalThis.fetch, baseUrl: string | undefined): RestApi {
  return createRestApi(fetch, onBase(PINTEREST_ENDPOINTS.api, baseUrl));
}

/** Pinterest's OAuth 2.0: a confidential client (HTTP Basic), no PKCE, comma-separated scopes; the account from /v5/user_account. */
export function pinterestOAuth(api: RestApi): OAuthPlatform {
  return {
    displayName: 'Pinterest',
    endpoints: { authorize: PINTEREST_ENDPOINTS.authorize, token: PINTEREST_ENDPOINTS.token, revoke: PINTEREST_ENDPOINTS.revoke },
    scopes: PINTEREST_SCOPES,
    scopeSeparator: ',',
    pkce: false,
    clientAuth: 'basic',
    async identify(tokens: OAuthTokens) {
      const me = await api<{ id?: unknown; username?: unknown; business_name?: unknown }>(
        { method: 'GET', path: '/v5/user_account', timeoutMs: 30_000 },
        tokens.accessToken,
      );
      if (!me.ok) {
        if (me.failure.kind === 'http' && me.failure.status < 500 && me.failure.status !== 429)
          throw new ConnectError('invalid_credentials', `Pinterest refused to say who the account is (${me.failure.status})`);
        throw new ConnectError(
          'unreachable',
          me.failure.kind === 'http' ? `Pinterest answered ${me.failure.status} when asked who the account is` : me.failure.message,
        );
      }
      const { id, username, business_name: businessName } = me.data;
      if (typeof username !== 'string' || username === '') throw new ConnectError('bad_answer', 'Pinterest answered an account Herald cannot read');
      return {
        platformUserId: typeof id === 'string' && id !== '' ? id : username,
        username,
        displayName: typeof businessName === 'string' && businessName !== '' ? businessName : null,
      };
    },
  };
}
