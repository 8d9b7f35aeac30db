import { ConnectError } from '../../../domain/ports/publisher.js';
import { onBase, type OAuthPlatform, type OAuthTokens } from '../oauth.js';
import { createRestApi, type RestApi } from '../rest-api.js';

/**
 * Reddit's OAuth 2.0 and API as its archived wiki and peers' clients use them (github.com/
 * reddit-archive/reddit/wiki/OAuth2, …/API, PRAW's media upload; reference notes in
 * shared/reference/platform-apis-x-linkedin-pinterest-reddit.md §5): consent and tokens on
 * www.reddit.com, the API on oauth.reddit.com; image bytes go to the upload URL Reddit leases.
 * HERALD_REDDIT_BASE_URL replaces both origins.
 */
export const REDDIT_ENDPOINTS = {
  authorize: 'https://www.reddit.com/api/v1/authorize',
  token: 'https://www.reddit.com/api/v1/access_token',
  revoke: 'https://www.reddit.com/api/v1/revoke_token',
  api: 'https://oauth.reddit.com',
} as const;

/** Who the account is, submitting, reading, flair, and the account's submissions (history: a post in doubt is looked for there). */
export const REDDIT_SCOPES = ['identity', 'submit', 'read', 'flair', 'history'] as const;

/**
 * Reddit throttles generic user agents: every call names Herald and the app, as its API rules ask
 * (`<platform>:<app ID>:<version string> (by /u/<reddit username>)`, the developer's account).
 */
export function withUserAgent(fetch: typeof globalThis.fetch, clientId: string, username: string | undefined): typeof globalThis.fetch {
  // Without a configured app no account can be connected, so no call names a developer.
  const agent = `server:herald-${clientId}:1.0${username === undefined ? '' : ` (by /u/${username})`}`;
  return (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('user-agent', agent);
    return fetch(input, { ...init, headers });
  };
}

export function createRedditApi(fetch: typeof globalThis.fetch, baseUrl: string | undefined): RestApi {
  return createRestApi(fetch, onBase(REDDIT_ENDPOINTS.api, baseUrl));
}

/** Reddit's OAuth: a confidential client (HTTP Basic), no PKCE, `duration=permanent` for a refresh token; the account from /api/v1/me. */
export function redditOAuth(api: RestApi): OAuthPlatform {
  return {
    displayName: 'Reddit',
    endpoints: { authorize: REDDIT_ENDPOINTS.authorize, token: REDDIT_ENDPOINTS.token, revoke: REDDIT_ENDPOINTS.revoke },
    scopes: REDDIT_SCOPES,
    authorizeParams: { duration: 'permanent' },
    pkce: false,
    clientAuth: 'basic',
    async identify(tokens: OAuthTokens) {
      const me = await api<{ id?: unknown; name?: unknown }>({ method: 'GET', path: '/api/v1/me', timeoutMs: 30_000 }, tokens.accessToken);
      if (!me.ok) {
        if (me.failure.kind === 'http' && me.failure.status < 500 && me.failure.status !== 429)
          throw new ConnectError('invalid_credentials', `Reddit refused to say who the account is (${me.failure.status})`);
        throw new ConnectError(
          'unreachable',
          me.failure.kind === 'http' ? `Reddit answered ${me.failure.status} when asked who the account is` : me.failure.message,
        );
      }
      const { id, name } = me.data;
      if (typeof id !== 'string' || typeof name !== 'string') throw new ConnectError('bad_answer', 'Reddit answered an account Herald cannot read');
      return { platformUserId: id, username: name, displayName: null };
    },
  };
}
