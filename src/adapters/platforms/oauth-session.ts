import type { PublishHooks } from '../../domain/ports/publisher.js';
import { failed, Halt } from './http-outcomes.js';
import { OAuthClientRefused, OAuthRefusal, type OAuthClient, type OAuthTokens } from './oauth.js';
import type { RestApi, RestCall, RestResult } from './rest-api.js';

/** An access token this close to its end is refreshed before use. */
const REFRESH_MARGIN_MS = 60_000;

/**
 * One publication's access to a platform whose tokens refresh with a refresh token (X,
 * Pinterest): the access token, refreshed before it ends and once when the platform refuses it,
 * through the token source (refreshes of one account take turns across workers, and a pair
 * another publication has just stored is taken as it is: these platforms rotate refresh tokens).
 */
export class OAuthSession {
  #refreshed = false;

  constructor(
    private readonly platform: { displayName: string; configName: string },
    private readonly oauth: OAuthClient | undefined,
    private credentials: OAuthTokens,
    private readonly hooks: PublishHooks<OAuthTokens>,
    private readonly now: Date,
  ) {}

  /** Sends with the access token; `refused` says which answers mean the token was refused (then refreshed and sent once more). */
  async use<T>(send: (accessToken: string) => Promise<T>, refused: (answer: T) => boolean): Promise<T> {
    if (this.credentials.expiresAt !== null && Date.parse(this.credentials.expiresAt) - this.now.getTime() < REFRESH_MARGIN_MS && !this.#refreshed)
      await this.refresh();
    const answer = await send(this.credentials.accessToken);
    if (!refused(answer) || this.#refreshed) return answer;
    await this.refresh();
    return send(this.credentials.accessToken);
  }

  /** A call to a JSON API, sent once more with a refreshed token when the platform answers 401. */
  rest<T>(api: RestApi, call: RestCall): Promise<RestResult<T>> {
    return this.use(
      (token) => api<T>(call, token),
      (result) => !result.ok && result.failure.kind === 'http' && result.failure.status === 401,
    );
  }

  private async refresh(): Promise<void> {
    this.#refreshed = true;
    const { displayName, configName } = this.platform;
    const oauth = this.oauth;
    if (oauth === undefined)
      throw new Halt(
        failed(
          'auth_expired',
          `${displayName} is not configured on this server (HERALD_${configName}_CLIENT_ID, HERALD_${configName}_CLIENT_SECRET), so the access token cannot be refreshed`,
        ),
      );
    this.credentials = await this.hooks
      .refreshCredentials(async (current) => {
        if (current.refreshToken === null)
          throw new Halt(failed('auth_expired', `${displayName} gave no refresh token for this account; connect it again`, { credentialsRevoked: true }));
        try {
          return await oauth.refresh(current.refreshToken);
        } catch (error) {
          if (error instanceof OAuthRefusal) throw new Halt(failed('auth_expired', error.message, { credentialsRevoked: true }));
          // The account's tokens may be fine: retried once the operator has fixed Herald's client id or secret.
          if (error instanceof OAuthClientRefused) throw new Halt(failed('platform_error', error.message, { retryable: true }));
          throw new Halt(failed('platform_error', `${displayName} could not refresh the access token`, { retryable: true }));
        }
      })
      .catch((error: unknown) => {
        if (error instanceof Halt) throw error;
        throw new Halt(failed('system_error', `Herald could not store the refreshed ${displayName} tokens`, { retryable: true }));
      });
  }
}

/** One publication's calls to a JSON API, each with a fresh access token (see OAuthSession). */
export interface RestSession {
  call<T>(call: RestCall): Promise<RestResult<T>>;
}

export function restSession(
  platform: { displayName: string; configName: string },
  oauth: OAuthClient | undefined,
  api: RestApi,
  request: { credentials: OAuthTokens; now: Date },
  hooks: PublishHooks<OAuthTokens>,
): RestSession {
  const session = new OAuthSession(platform, oauth, request.credentials, hooks, request.now);
  return { call: (call) => session.rest(api, call) };
}
