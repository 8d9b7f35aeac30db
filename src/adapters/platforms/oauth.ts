import * as oauth from 'oauth4webapi';
import type { ConnectedAccount } from '../../domain/ports/publisher.js';
import { ConnectError } from '../../domain/ports/publisher.js';
import type { ConsentStart, OAuthConsent, RegisteredApp } from '../../domain/ports/oauth.js';
import { AnswerTooLargeError, formatBytes, readBoundedText } from '../net/bounded-body.js';
import { networkMessage } from '../net/network-message.js';

/** A platform's app on this server, from `HERALD_<PLATFORM>_CLIENT_ID` and `_CLIENT_SECRET`. */
export type OAuthApp = RegisteredApp;

/** What an OAuth platform keeps to publish: its tokens, and when the access token ends. */
export interface OAuthTokens {
  accessToken: string;
  /** Null where the platform gives none (the person consents again when the access token ends). */
  refreshToken: string | null;
  /** ISO 8601; null when the platform does not say. */
  expiresAt: string | null;
}

export interface OAuthPlatform {
  displayName: string;
  /** The issuer its ID tokens name, for platforms that answer one (OpenID Connect); else the consent page's origin. */
  issuer?: string;
  /** The documented endpoints (absolute URLs); `baseUrl` replaces their origin. */
  endpoints: { authorize: string; token: string; revoke?: string };
  scopes: readonly string[];
  /** How the consent URL joins the scopes: a space as RFC 6749 says, or a comma (Pinterest). */
  scopeSeparator?: ' ' | ',';
  /** More parameters of the consent URL (Google's `access_type=offline`). */
  authorizeParams?: Readonly<Record<string, string>>;
  /** Said after a refused refresh token: what usually causes it on this platform. */
  refusalHint?: string;
  /** PKCE S256, where the platform supports it. */
  pkce: boolean;
  /** How the client authenticates at the token endpoint: HTTP Basic or the form's body. */
  clientAuth: 'basic' | 'post';
  /** Reads who the account is with a fresh access token; `credentials`, when given, are kept instead of the tokens. */
  identify(tokens: OAuthTokens): Promise<Omit<ConnectedAccount<unknown>, 'credentials'> & { credentials?: unknown }>;
}

export interface OAuthClient {
  consent: OAuthConsent;
  /** New tokens for a refresh token; rejects with OAuthRefusal when the platform refuses it for good. */
  refresh(refreshToken: string): Promise<OAuthTokens>;
}

/** The longest a call to a platform's token or revocation endpoint may take. */
const TOKEN_CALL_TIMEOUT_MS = 30_000;

/** The most of a token endpoint's answer Herald reads (after decompression): token answers are a few KiB. */
const TOKEN_ANSWER_LIMIT_BYTES = 64 * 1024;

/** The longest access or refresh token Herald keeps: real ones are at most a few KiB (JWTs included). */
export const TOKEN_LIMIT_CHARACTERS = 8 * 1024;

/** The platform refused Herald's own client id or secret (HTTP 401 with a `WWW-Authenticate` challenge): the operator must fix them. */
export class OAuthClientRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OAuthClientRefused';
  }
}

/** The platform refused a refresh token (used, revoked, expired): the account needs a new consent. */
export class OAuthRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OAuthRefusal';
  }
}

/** A documented URL with its origin replaced by `baseUrl` (path and query kept). */
export function onBase(url: string, baseUrl: string | undefined): string {
  if (baseUrl === undefined) return url;
  const documented = new URL(url);
  return new URL(`${documented.pathname}${documented.search}`, baseUrl).toString();
}

/**
 * The authorization-code flow of one platform on oauth4webapi: the consent URL (with PKCE S256
 * where the platform takes it), the code exchange, refreshes and revocation, all through the
 * given fetch. An `http` base URL (a fake in the tests, a proxy) is allowed only when one is set.
 */
export function createOAuthClient(
  platform: OAuthPlatform,
  app: OAuthApp,
  options: { fetch: typeof globalThis.fetch; baseUrl: string | undefined },
): OAuthClient {
  const as: oauth.AuthorizationServer = {
    issuer: platform.issuer ?? new URL(platform.endpoints.authorize).origin,
    authorization_endpoint: onBase(platform.endpoints.authorize, options.baseUrl),
    token_endpoint: onBase(platform.endpoints.token, options.baseUrl),
    ...(platform.endpoints.revoke === undefined ? {} : { revocation_endpoint: onBase(platform.endpoints.revoke, options.baseUrl) }),
  };
  const client: oauth.Client = { client_id: app.clientId };
  const auth = platform.clientAuth === 'basic' ? plainBasic(app.clientSecret) : oauth.ClientSecretPost(app.clientSecret);
  // Plain http only where the operator or the SSRF guard allowed it (a fake, a proxy, a private instance).
  const requestOptions = {
    [oauth.customFetch]: boundedAnswers(options.fetch),
    [oauth.allowInsecureRequests]: as.token_endpoint?.startsWith('http:') === true,
  };
  const bounded = () => ({ ...requestOptions, signal: AbortSignal.timeout(TOKEN_CALL_TIMEOUT_MS) });

  const tokensOf = (response: oauth.TokenEndpointResponse): OAuthTokens => {
    for (const token of [response.access_token, response.refresh_token])
      if (token !== undefined && token.length > TOKEN_LIMIT_CHARACTERS)
        throw new ConnectError(
          'bad_answer',
          `${platform.displayName} answered a token longer than ${TOKEN_LIMIT_CHARACTERS} characters, which Herald does not keep`,
        );
    return {
      accessToken: response.access_token,
      refreshToken: response.refresh_token ?? null,
      expiresAt: response.expires_in === undefined ? null : new Date(Date.now() + response.expires_in * 1000).toISOString(),
    };
  };

  const consent: OAuthConsent = {
    async begin(state, redirectUri): Promise<ConsentStart> {
      const url = new URL(as.authorization_endpoint as string);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('client_id', app.clientId);
      url.searchParams.set('redirect_uri', redirectUri);
      url.searchParams.set('scope', platform.scopes.join(platform.scopeSeparator ?? ' '));
      url.searchParams.set('state', state);
      for (const [name, value] of Object.entries(platform.authorizeParams ?? {})) url.searchParams.set(name, value);
      let codeVerifier: string | null = null;
      if (platform.pkce) {
        codeVerifier = oauth.generateRandomCodeVerifier();
        url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier));
        url.searchParams.set('code_challenge_method', 'S256');
      }
      return { authorizationUrl: url.toString(), codeVerifier };
    },
    async finish(code, codeVerifier, redirectUri) {
      let tokens: OAuthTokens;
      try {
        const callback = oauth.validateAuthResponse(as, client, new URLSearchParams({ code }), oauth.skipStateCheck);
        const response = await oauth.authorizationCodeGrantRequest(as, client, auth, callback, redirectUri, codeVerifier ?? oauth.nopkce, bounded());
        tokens = tokensOf(await oauth.processAuthorizationCodeResponse(as, client, response));
      } catch (error) {
        throw connectErrorOf(platform.displayName, new URL(as.token_endpoint as string).host, error);
      }
      const who = await platform.identify(tokens);
      const ends = tokens.refreshToken === null && tokens.expiresAt !== null ? { endsAt: new Date(tokens.expiresAt) } : {};
      return [{ ...who, credentials: who.credentials ?? tokens, ...ends }];
    },
    async revoke(credentials) {
      const { accessToken, refreshToken } = credentials as Partial<OAuthTokens>;
      for (const token of [refreshToken, accessToken]) if (typeof token === 'string') await revoke(token);
    },
  };

  async function revoke(token: string): Promise<void> {
    if (as.revocation_endpoint === undefined) return;
    try {
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, token, bounded()));
    } catch {
      // Best effort: the token stays valid at the platform until it expires.
    }
  }

  return {
    consent,
    async refresh(refreshToken) {
      try {
        const response = await oauth.refreshTokenGrantRequest(as, client, auth, refreshToken, bounded());
        const refreshed = tokensOf(await oauth.processRefreshTokenResponse(as, client, response));
        // A platform that does not rotate refresh tokens answers without one: the old one still holds.
        return { ...refreshed, refreshToken: refreshed.refreshToken ?? refreshToken };
      } catch (error) {
        if (error instanceof oauth.WWWAuthenticateChallengeError) throw new OAuthClientRefused(clientRefusedMessage(platform.displayName));
        if (error instanceof oauth.ResponseBodyError && error.status >= 400 && error.status < 500) {
          throw new OAuthRefusal(
            `${platform.displayName} refused the stored refresh token (${error.error}): connect the account again${platform.refusalHint ?? ''}`,
          );
        }
        const refused = refusedWithoutOAuthError(error);
        if (refused !== null)
          throw new OAuthRefusal(
            `${platform.displayName} refused the stored refresh token (${refused}): connect the account again${platform.refusalHint ?? ''}`,
          );
        throw error;
      }
    },
  };
}

/** A failed exchange as a ConnectError whose message names the platform's error code, never a token. */
function connectErrorOf(displayName: string, host: string, error: unknown): ConnectError {
  if (error instanceof oauth.WWWAuthenticateChallengeError) return new ConnectError('client_refused', clientRefusedMessage(displayName));
  if (error instanceof AnswerTooLargeError)
    return new ConnectError('bad_answer', `${displayName} answered the code exchange with more than ${formatBytes(error.limitBytes)}`);
  if (error instanceof oauth.ResponseBodyError) {
    if (error.status >= 500) return new ConnectError('unreachable', `${displayName} answered ${error.status} to the code exchange`);
    return new ConnectError('invalid_credentials', `${displayName} refused the code exchange (${error.error})`);
  }
  const refused = refusedWithoutOAuthError(error);
  if (refused !== null) return new ConnectError('invalid_credentials', `${displayName} refused the code exchange (${refused})`);
  if (error instanceof oauth.OperationProcessingError)
    return new ConnectError('bad_answer', `${displayName} answered the code exchange with something Herald cannot use`);
  if (error instanceof ConnectError) return error;
  return new ConnectError('unreachable', `${displayName} could not be reached: ${networkMessage(error, host)}`);
}

/**
 * A token endpoint's 400 or 401 whose body is not OAuth's `{error}` (Pinterest answers its own
 * `{code, message}`): the HTTP status, to name; null for anything else.
 */
function refusedWithoutOAuthError(error: unknown): string | null {
  if (!(error instanceof oauth.OperationProcessingError) || !(error.cause instanceof Response)) return null;
  const { status } = error.cause;
  return status === 400 || status === 401 ? `HTTP ${status}` : null;
}

function clientRefusedMessage(displayName: string): string {
  return `${displayName} refused Herald's client id or secret: the operator must check them`;
}

/**
 * HTTP Basic with the client id and secret exactly as registered, base64 of `id:secret` as `curl
 * --user` sends it. oauth4webapi's ClientSecretBasic form-encodes them first (RFC 6749 §2.3.1),
 * which Reddit and others compare as sent, so an id holding `-` or `_` would be refused.
 */
function plainBasic(clientSecret: string): oauth.ClientAuth {
  return (_as, client, _body, headers) => {
    headers.set('authorization', `Basic ${Buffer.from(`${client.client_id}:${clientSecret}`).toString('base64')}`);
  };
}

/**
 * The fetch oauth4webapi calls, with every answer's body read through the bounded reader (counted
 * after decompression) and handed on whole: a hostile token endpoint's huge or gzip-bomb answer is
 * cut at the limit instead of filling memory.
 */
function boundedAnswers(fetch: typeof globalThis.fetch): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const text = await readBoundedText(response, TOKEN_ANSWER_LIMIT_BYTES);
    const headers = new Headers(response.headers);
    // The body is already decoded: its former length and encoding no longer describe it.
    headers.delete('content-encoding');
    headers.delete('content-length');
    const empty = response.status === 204 || response.status === 205 || response.status === 304;
    return new Response(empty ? null : text, { status: response.status, statusText: response.statusText, headers });
  };
}
