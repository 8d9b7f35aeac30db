import { readBoundedText } from '../../net/bounded-body.js';
import { noAnswer, parseJson, type NoAnswer } from '../http-outcomes.js';
import { onBase, type OAuthPlatform, type OAuthTokens } from '../oauth.js';
import { ConnectError } from '../../../domain/ports/publisher.js';

/**
 * LinkedIn's OAuth and versioned REST API as documented (learn.microsoft.com/linkedin: Sign In
 * with LinkedIn using OpenID Connect, Share on LinkedIn, Posts API, Images API, Videos API,
 * Comments API; reference notes in shared/reference/platform-apis-x-linkedin-pinterest-reddit.md
 * §3): consent and tokens on www.linkedin.com, the API on api.linkedin.com.
 * HERALD_LINKEDIN_BASE_URL replaces both origins; upload URLs LinkedIn returns are used as given.
 */
export const LINKEDIN_ENDPOINTS = {
  authorize: 'https://www.linkedin.com/oauth/v2/authorization',
  token: 'https://www.linkedin.com/oauth/v2/accessToken',
  revoke: 'https://www.linkedin.com/oauth/v2/revoke',
  api: 'https://api.linkedin.com',
} as const;

/** Who the member is (OpenID Connect) and posting as them (Share on LinkedIn): both self-serve products. */
export const LINKEDIN_SCOPES = ['openid', 'profile', 'email', 'w_member_social'] as const;

const ANSWER_LIMIT_BYTES = 2 * 1024 * 1024;

export type LinkedInFailure = { kind: 'http'; status: number; body: unknown; headers: Headers } | NoAnswer;

export type LinkedInResult<T> = { ok: true; status: number; data: T; headers: Headers } | { ok: false; failure: LinkedInFailure };

export interface LinkedInCall {
  method: 'GET' | 'POST' | 'PUT';
  /** A path on the API's origin, or an absolute upload URL LinkedIn gave. */
  path: string;
  json?: unknown;
  bytes?: Buffer;
  /** Presigned upload URLs take no token. */
  anonymous?: boolean;
  timeoutMs: number;
}

export type LinkedInApi = <T>(call: LinkedInCall, accessToken: string) => Promise<LinkedInResult<T>>;

/** Calls to LinkedIn over the injected fetch, with the version headers every /rest call needs; every answer is a value. */
export function createLinkedInApi(fetch: typeof globalThis.fetch, baseUrl: string | undefined, version: string): LinkedInApi {
  const origin = onBase(LINKEDIN_ENDPOINTS.api, baseUrl).replace(/\/$/, '');
  return async <T>(call: LinkedInCall, accessToken: string): Promise<LinkedInResult<T>> => {
    const url = /^https?:\/\//.test(call.path) ? call.path : `${origin}${call.path}`;
    const headers: Record<string, string> = {};
    if (call.anonymous !== true) headers.authorization = `Bearer ${accessToken}`;
    if (call.path.startsWith('/rest/')) {
      headers['linkedin-version'] = version;
      headers['x-restli-protocol-version'] = '2.0.0';
    }
    let body: string | Uint8Array | undefined;
    if (call.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(call.json);
    } else if (call.bytes !== undefined) {
      headers['content-type'] = 'application/octet-stream';
      body = call.bytes;
    }
    try {
      const response = await fetch(url, { method: call.method, headers, body, redirect: 'error', signal: AbortSignal.timeout(call.timeoutMs) });
      const text = await readBoundedText(response, ANSWER_LIMIT_BYTES);
      const parsed = text === '' ? {} : parseJson(text);
      if (response.ok && parsed !== undefined) return { ok: true, status: response.status, data: parsed as T, headers: response.headers };
      return { ok: false, failure: { kind: 'http', status: response.status, body: parsed, headers: response.headers } };
    } catch (thrown) {
      return { ok: false, failure: noAnswer(thrown, new URL(url).host) };
    }
  };
}

/**
 * LinkedIn's authorization-code flow for a confidential web app: no PKCE (LinkedIn offers it to
 * native apps only), client credentials in the form's body; the member from /v2/userinfo.
 * Self-serve apps get no refresh token: the access token lasts 60 days.
 */
export function linkedInOAuth(api: LinkedInApi): OAuthPlatform {
  return {
    displayName: 'LinkedIn',
    issuer: 'https://www.linkedin.com/oauth',
    endpoints: { authorize: LINKEDIN_ENDPOINTS.authorize, token: LINKEDIN_ENDPOINTS.token, revoke: LINKEDIN_ENDPOINTS.revoke },
    scopes: LINKEDIN_SCOPES,
    pkce: false,
    clientAuth: 'post',
    async identify(tokens: OAuthTokens) {
      const me = await api<{ sub?: unknown; name?: unknown }>({ method: 'GET', path: '/v2/userinfo', timeoutMs: 30_000 }, tokens.accessToken);
      if (!me.ok) {
        if (me.failure.kind === 'http' && me.failure.status < 500 && me.failure.status !== 429)
          throw new ConnectError('invalid_credentials', `LinkedIn refused to say who the member is (${me.failure.status})`);
        throw new ConnectError(
          'unreachable',
          me.failure.kind === 'http' ? `LinkedIn answered ${me.failure.status} when asked who the member is` : me.failure.message,
        );
      }
      const { sub, name } = me.data;
      if (typeof sub !== 'string' || sub === '' || typeof name !== 'string' || name === '')
        throw new ConnectError('bad_answer', 'LinkedIn answered a member Herald cannot read');
      // Self-serve apps cannot read a member's vanity name: the name stands in for a handle.
      return { platformUserId: sub, username: name, displayName: name };
    },
  };
}
