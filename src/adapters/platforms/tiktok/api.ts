import type { OAuthConsent } from '../../../domain/ports/oauth.js';
import { ConnectError } from '../../../domain/ports/publisher.js';
import { readBoundedText } from '../../net/bounded-body.js';
import { networkMessage } from '../../net/network-message.js';
import { parseJson } from '../http-outcomes.js';
import { onBase, OAuthRefusal, type OAuthApp, type OAuthClient, type OAuthTokens } from '../oauth.js';
import { createRestApi, type RestApi, type RestResult } from '../rest-api.js';

/**
 * TikTok's Login Kit (OAuth v2) and Content Posting API as documented (developers.tiktok.com/doc:
 * login-kit-web, oauth-user-access-token-management and docs/en/oauth-refresh-a-user-access-token,
 * content-posting-api-reference-query-creator-info, -direct-post, -photo-post,
 * -get-video-status, content-posting-api-media-transfer-guide, tiktok-api-v2-error-handling;
 * reference notes in shared/reference/platform-apis-meta-tiktok-youtube.md §5): the consent page
 * on www.tiktok.com, everything else on open.tiktokapis.com; video bytes go to the upload URL
 * TikTok gives. HERALD_TIKTOK_BASE_URL replaces both origins.
 */
export const TIKTOK_ENDPOINTS = {
  authorize: 'https://www.tiktok.com/v2/auth/authorize/',
  api: 'https://open.tiktokapis.com',
} as const;

/** Who the account is, direct posting, and uploads. */
export const TIKTOK_SCOPES = ['user.info.basic', 'video.publish', 'video.upload'] as const;

const TOKEN_TIMEOUT_MS = 30_000;

export function createTikTokApi(fetch: typeof globalThis.fetch, baseUrl: string | undefined): RestApi {
  return createRestApi(fetch, onBase(TIKTOK_ENDPOINTS.api, baseUrl));
}

/** TikTok's answer envelope: `{data, error: {code, message, log_id}}`, where only `code: "ok"` is success, whatever the status. */
export type TikTokAnswer<T> =
  { ok: true; data: T; text: string } | { ok: false; code: string | null; message: string | null; status: number | null; network: string | null };

export function envelope<T>(result: RestResult<{ data?: T; error?: { code?: unknown; message?: unknown } }>): TikTokAnswer<T> {
  if (!result.ok) {
    const { failure } = result;
    if (failure.kind !== 'http') return { ok: false, code: null, message: null, status: null, network: failure.message };
    const error = (failure.body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
    return {
      ok: false,
      code: typeof error?.code === 'string' ? error.code : null,
      message: typeof error?.message === 'string' ? error.message : null,
      status: failure.status,
      network: null,
    };
  }
  const code = result.data.error?.code;
  if (code !== undefined && code !== 'ok')
    return {
      ok: false,
      code: typeof code === 'string' ? code : JSON.stringify(code),
      message: typeof result.data.error?.message === 'string' ? result.data.error.message : null,
      status: 200,
      network: null,
    };
  return { ok: true, data: result.data.data ?? ({} as T), text: result.text };
}

/**
 * TikTok's OAuth 2.0: a `client_key` where the standard says `client_id` (so no generic client),
 * comma-separated scopes, refresh tokens that rotate on every refresh.
 */
export function tiktokOAuth(fetch: typeof globalThis.fetch, baseUrl: string | undefined, app: OAuthApp): OAuthClient {
  const api = createTikTokApi(fetch, baseUrl);
  const tokenUrl = `${onBase(TIKTOK_ENDPOINTS.api, baseUrl).replace(/\/$/, '')}/v2/oauth/token/`;
  const token = async (grant: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> => {
    const response = await fetch(tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_key: app.clientId, client_secret: app.clientSecret, ...grant }).toString(),
      redirect: 'error',
      signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
    });
    const parsed = parseJson(await readBoundedText(response, 64 * 1024));
    return { status: response.status, body: typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {} };
  };
  const tokensOf = (body: Record<string, unknown>): OAuthTokens | null =>
    typeof body.access_token === 'string' && typeof body.refresh_token === 'string'
      ? {
          accessToken: body.access_token,
          refreshToken: body.refresh_token,
          expiresAt: typeof body.expires_in === 'number' ? new Date(Date.now() + body.expires_in * 1000).toISOString() : null,
        }
      : null;
  const host = new URL(tokenUrl).host;

  const consent: OAuthConsent = {
    begin(state, redirectUri) {
      const url = new URL(onBase(TIKTOK_ENDPOINTS.authorize, baseUrl));
      url.searchParams.set('client_key', app.clientId);
      url.searchParams.set('scope', TIKTOK_SCOPES.join(','));
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('redirect_uri', redirectUri);
      url.searchParams.set('state', state);
      return Promise.resolve({ authorizationUrl: url.toString(), codeVerifier: null });
    },
    async finish(code, _verifier, redirectUri) {
      let answer;
      try {
        answer = await token({ code, grant_type: 'authorization_code', redirect_uri: redirectUri });
      } catch (error) {
        throw new ConnectError('unreachable', `TikTok could not be reached: ${networkMessage(error, host)}`);
      }
      if (answer.status >= 500) throw new ConnectError('unreachable', `TikTok answered ${answer.status} to the code exchange`);
      const tokens = tokensOf(answer.body);
      if (tokens === null) throw new ConnectError('invalid_credentials', `TikTok refused the code exchange (${errorName(answer)})`);
      const user = envelope<{ user?: { open_id?: unknown; username?: unknown; display_name?: unknown } }>(
        await api(
          { method: 'GET', path: '/v2/user/info/?fields=open_id,union_id,avatar_url,display_name,username', timeoutMs: TOKEN_TIMEOUT_MS },
          tokens.accessToken,
        ),
      );
      if (!user.ok)
        throw new ConnectError(
          user.status !== null && user.status >= 500 ? 'unreachable' : 'invalid_credentials',
          `TikTok refused to say who the account is (${user.code ?? user.status ?? user.network})`,
        );
      const { open_id: openId, username, display_name: displayName } = user.data.user ?? {};
      if (typeof openId !== 'string' || typeof username !== 'string') throw new ConnectError('bad_answer', 'TikTok answered an account Herald cannot read');
      return [
        { platformUserId: openId, username, displayName: typeof displayName === 'string' && displayName !== '' ? displayName : null, credentials: tokens },
      ];
    },
    async revoke(credentials) {
      const { accessToken } = credentials as Partial<OAuthTokens>;
      if (typeof accessToken !== 'string') return;
      await fetch(`${onBase(TIKTOK_ENDPOINTS.api, baseUrl).replace(/\/$/, '')}/v2/oauth/revoke/`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_key: app.clientId, client_secret: app.clientSecret, token: accessToken }).toString(),
        signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
      }).catch(() => undefined);
    },
  };

  return {
    consent,
    async refresh(refreshToken) {
      const answer = await token({ grant_type: 'refresh_token', refresh_token: refreshToken });
      const tokens = tokensOf(answer.body);
      if (tokens !== null) return tokens;
      if (answer.status < 500) throw new OAuthRefusal(`TikTok refused the stored refresh token (${errorName(answer)}): connect the account again`);
      throw new Error(`TikTok answered ${answer.status} to a refresh`);
    },
  };
}

/** The token endpoint's `error` code, or its HTTP status when it gave none. */
function errorName(answer: { status: number; body: Record<string, unknown> }): string {
  return typeof answer.body.error === 'string' ? answer.body.error : `HTTP ${answer.status}`;
}
