import { ConnectError } from '../../../domain/ports/publisher.js';
import { onBase, type OAuthPlatform, type OAuthTokens } from '../oauth.js';
import { createRestApi, type RestApi, type RestCall, type RestResult } from '../rest-api.js';

/**
 * Google OAuth 2.0 and the YouTube Data API v3 as documented (developers.google.com/identity/
 * protocols/oauth2/web-server; developers.google.com/youtube/v3: docs/videos/insert,
 * guides/using_resumable_upload_protocol, docs/videos/list, docs/channels/list,
 * docs/playlistItems/list, docs/commentThreads/insert, docs/errors, determine_quota_cost;
 * reference notes in shared/reference/platform-apis-meta-tiktok-youtube.md §6): the consent page
 * on accounts.google.com, tokens on oauth2.googleapis.com, the API and uploads on
 * www.googleapis.com. HERALD_YOUTUBE_BASE_URL replaces the three origins.
 */
export const YOUTUBE_ENDPOINTS = {
  authorize: 'https://accounts.google.com/o/oauth2/v2/auth',
  token: 'https://oauth2.googleapis.com/token',
  revoke: 'https://oauth2.googleapis.com/revoke',
  api: 'https://www.googleapis.com',
} as const;

/** Uploading, the first comment (commentThreads.insert needs force-ssl), and reading the channel. */
export const YOUTUBE_SCOPES = [
  'https://www.googleapis.com/auth/youtube.upload',
  'https://www.googleapis.com/auth/youtube.force-ssl',
  'https://www.googleapis.com/auth/youtube.readonly',
] as const;

export function createYouTubeApi(fetch: typeof globalThis.fetch, baseUrl: string | undefined): RestApi {
  return createRestApi(fetch, onBase(YOUTUBE_ENDPOINTS.api, baseUrl));
}

/** The account's channel: its id, name and uploads playlist (mine=true; the first when there are several). */
export async function channelOf(
  call: <T>(call: RestCall) => Promise<RestResult<T>>,
): Promise<{ ok: true; id: string; title: string; handle: string | null; uploads: string | null } | { ok: false; status: number | null; message: string }> {
  const read = await call<{
    items?: { id?: unknown; snippet?: { title?: unknown; customUrl?: unknown }; contentDetails?: { relatedPlaylists?: { uploads?: unknown } } }[];
  }>({
    method: 'GET',
    path: '/youtube/v3/channels?part=id,snippet,contentDetails&mine=true',
    timeoutMs: 30_000,
  });
  if (!read.ok)
    return {
      ok: false,
      status: read.failure.kind === 'http' ? read.failure.status : null,
      message: read.failure.kind === 'http' ? `YouTube answered ${read.failure.status}` : read.failure.message,
    };
  const channel = read.data.items?.[0];
  if (typeof channel?.id !== 'string') return { ok: false, status: null, message: 'The Google account has no YouTube channel' };
  const title = typeof channel.snippet?.title === 'string' ? channel.snippet.title : channel.id;
  const handle = typeof channel.snippet?.customUrl === 'string' && channel.snippet.customUrl !== '' ? channel.snippet.customUrl : null;
  const uploads = channel.contentDetails?.relatedPlaylists?.uploads;
  return { ok: true, id: channel.id, title, handle, uploads: typeof uploads === 'string' ? uploads : null };
}

/**
 * Google's OAuth 2.0 for a web server: PKCE S256, client credentials in the form, `access_type=
 * offline` for a refresh token and `prompt=consent` so a reconnect gets one again; the account is
 * its YouTube channel.
 */
export function youTubeOAuth(api: RestApi): OAuthPlatform {
  return {
    displayName: 'YouTube',
    issuer: 'https://accounts.google.com',
    endpoints: { authorize: YOUTUBE_ENDPOINTS.authorize, token: YOUTUBE_ENDPOINTS.token, revoke: YOUTUBE_ENDPOINTS.revoke },
    scopes: YOUTUBE_SCOPES,
    authorizeParams: { access_type: 'offline', prompt: 'consent' },
    refusalHint:
      '. Google ends refresh tokens after 7 days while the OAuth consent screen of the operator’s Google Cloud project is in "Testing": the operator must publish it',
    pkce: true,
    clientAuth: 'post',
    async identify(tokens: OAuthTokens) {
      const channel = await channelOf((call) => api(call, tokens.accessToken));
      if (!channel.ok) {
        if (channel.status === null || channel.status >= 500 || channel.status === 429)
          throw new ConnectError(channel.status === null && channel.message.includes('channel') ? 'invalid_credentials' : 'unreachable', channel.message);
        throw new ConnectError('invalid_credentials', `YouTube refused to say which channel this is (${channel.status})`);
      }
      return { platformUserId: channel.id, username: channel.handle ?? channel.title, displayName: channel.title };
    },
  };
}
