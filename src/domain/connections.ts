import { createHash, randomBytes } from 'node:crypto';
import {
  endConnection,
  insertConnection,
  insertInstanceApp,
  selectConnection,
  selectInstanceApp,
  takeConnectionByState,
  type ConnectionRow,
} from '../db/queries/connections.js';
import type { ConnectionStatus } from '../db/schema.js';
import type { Connection, ConnectionStartInput } from './api-types.js';
import type { Dependencies } from './dependencies.js';
import { DomainError, errorName, invalidRequest } from './errors.js';
import { isWellFormedId, newId } from './ids.js';
import { isConnectError, storeConnectedAccount } from './live-accounts.js';
import { appVariables, displayNameOf, livePlatform } from './platforms/live.js';
import type { InstanceConsent, OAuthConsent } from './ports/oauth.js';
import type { ConnectError } from './ports/publisher.js';

/** How long a person has to come back from a platform's consent page. */
export const CONNECTION_LIFETIME_MS = 10 * 60_000;
/** Longer states are not Herald's (it sends 43 characters); they are not looked up. */
const MAX_STATE_LENGTH = 512;

export type ConnectionDeps = Pick<Dependencies, 'db' | 'vault' | 'oauth' | 'instanceOAuth' | 'checkServiceUrl' | 'callbackUrl' | 'log' | 'now'>;

/**
 * Starts connecting an account through the platform's consent page: a random state bound to one
 * new connection (kept only as its hash), the PKCE verifier sealed, the consent URL to send the
 * person to. Refused, with nothing stored, for a platform that connects with credentials, one that
 * does not publish live yet, or one whose app this server lacks.
 */
export async function startConnection(deps: ConnectionDeps, userId: string, input: ConnectionStartInput, now: Date): Promise<Connection> {
  if (input.returnUrl !== undefined && !isHttpUrl(input.returnUrl)) {
    throw invalidRequest([
      {
        code: 'invalid_string',
        expected: 'an absolute http or https URL',
        received: input.returnUrl,
        path: ['returnUrl'],
        message: 'returnUrl must be an absolute http or https URL',
      },
    ]);
  }
  const platform = livePlatform(input.platform);
  if (platform === undefined)
    throw new DomainError(
      'not_allowed',
      `${displayNameOf(input.platform)} accounts cannot be connected live yet; connect a sandbox account with POST /api/v1/accounts`,
      undefined,
      'not_connectable',
    );
  let consent: OAuthConsent | undefined;
  let instance: string | null = null;
  if (platform.connects === 'credentials') {
    const perInstance = deps.instanceOAuth[platform.id];
    if (perInstance === undefined)
      throw new DomainError('not_allowed', `${input.platform} connects with credentials: use POST /api/v1/accounts`, undefined, 'not_connectable');
    instance = instanceOf(input.instance);
    consent = await instanceConsent(deps, platform.id, instance, perInstance);
  } else {
    consent = deps.oauth[platform.id];
    if (consent === undefined)
      throw new DomainError(
        'not_allowed',
        `Platform not configured: set ${appVariables(platform).join(' and ')} on the server`,
        undefined,
        'platform_not_configured',
      );
  }
  const state = randomBytes(32).toString('base64url');
  const started = await consent.begin(state, deps.callbackUrl);
  const row = await insertConnection(deps.db, {
    id: newId('conn'),
    user_id: userId,
    platform: platform.id,
    status: 'pending',
    state_hash: hashOf(state),
    code_verifier: started.codeVerifier === null ? null : deps.vault.seal({ codeVerifier: started.codeVerifier }),
    authorization_url: started.authorizationUrl,
    return_url: input.returnUrl ?? null,
    instance,
    created_at: now,
    expires_at: new Date(now.getTime() + CONNECTION_LIFETIME_MS),
  });
  return toConnectionView(row, now);
}

export async function getConnection(deps: Pick<Dependencies, 'db'>, userId: string, id: string, now: Date): Promise<Connection> {
  const row = isWellFormedId('conn', id) ? await selectConnection(deps.db, userId, id) : undefined;
  if (row === undefined) throw new DomainError('not_found', 'Connection not found');
  return toConnectionView(row, now);
}

/** What the callback came to: a state Herald does not hold (or no longer), or a connection that has ended. */
export type CallbackOutcome = { kind: 'unknown_state' } | { kind: 'ended'; connection: Connection; returnUrl: string | null };

export interface CallbackQuery {
  state?: string;
  code?: string;
  error?: string;
}

/**
 * Completes a connection from the platform's redirect: the state is taken once (a replay finds
 * nothing), then the person's refusal, an expired connection, a failed exchange or an account that
 * cannot be stored each end it `failed` (or `expired`) with a message; else the account is
 * connected, or reconnected in place.
 */
export async function completeConnection(deps: ConnectionDeps, query: CallbackQuery, now: Date): Promise<CallbackOutcome> {
  if (query.state === undefined || query.state === '' || query.state.length > MAX_STATE_LENGTH) return { kind: 'unknown_state' };
  const taken = await takeConnectionByState(deps.db, hashOf(query.state));
  if (taken === undefined) return { kind: 'unknown_state' };
  const end = async (
    status: Exclude<ConnectionStatus, 'pending'>,
    fields: { account_ids?: string[]; error?: string; code?: ConnectionErrorCode },
  ): Promise<CallbackOutcome> => {
    const ids = fields.account_ids ?? null;
    const row = await endConnection(deps.db, taken.id, {
      status,
      account_id: ids?.[0] ?? null,
      account_ids: ids,
      error: fields.error ?? null,
      error_code: fields.code ?? null,
      ended_at: now,
    });
    return { kind: 'ended', connection: toConnectionView(row ?? taken, now), returnUrl: taken.return_url };
  };
  const platform = displayNameOf(taken.platform);
  if (taken.expires_at.getTime() <= now.getTime()) return end('expired', {});
  if (query.error !== undefined)
    return end('failed', { error: `The person did not allow access on ${platform} (${errorCode(query.error)})`, code: 'access_denied' });
  if (query.code === undefined || query.code === '') return end('failed', { error: `${platform} sent no authorization code`, code: 'platform_error' });
  try {
    const perInstance = taken.instance === null ? undefined : deps.instanceOAuth[taken.platform];
    const consent =
      perInstance === undefined || taken.instance === null
        ? deps.oauth[taken.platform]
        : await instanceConsent(deps, taken.platform, taken.instance, perInstance);
    if (consent === undefined) return await end('failed', { error: `${platform} is no longer configured on this server`, code: 'platform_not_configured' });
    const verifier = taken.code_verifier === null ? null : deps.vault.open<{ codeVerifier: string }>(taken.code_verifier).codeVerifier;
    const connected = await consent.finish(query.code, verifier, deps.callbackUrl);
    const ids: string[] = [];
    for (const one of connected) ids.push((await storeConnectedAccount(deps, { userId: taken.user_id }, taken.platform, one)).account.id);
    return await end('connected', { account_ids: ids });
  } catch (error) {
    if (isConnectError(error)) return end('failed', { error: error.message, code: CONNECT_ERROR_CODES[error.reason] });
    if (error instanceof DomainError) return end('failed', { error: error.message, code: connectionErrorCodeOf(error.code) ?? 'system_error' });
    deps.log.error({ connectionId: taken.id, errorName: errorName(error) }, 'connecting an account failed');
    return end('failed', { error: `Herald failed while connecting the ${platform} account; start again`, code: 'system_error' });
  }
}

/** The instance a connection goes through: an absolute http(s) URL, kept as its origin. */
function instanceOf(given: string | undefined): string {
  const refuse = (received: string, message: string) =>
    invalidRequest([
      { code: given === undefined ? 'invalid_type' : 'invalid_string', expected: 'an absolute https URL', received, path: ['instance'], message },
    ]);
  if (given === undefined) throw refuse('undefined', 'Mastodon connects through the consent page of an instance: give its URL, e.g. https://mastodon.social');
  try {
    const url = new URL(given);
    if ((url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '') return url.origin;
  } catch {
    // Refused below.
  }
  throw refuse(given, 'instance must be an absolute http or https URL');
}

/**
 * The consent flow on an instance, with Herald's app there: registered on first use (through the
 * SSRF guard) and kept, its secret sealed, for every later connection through that instance.
 */
async function instanceConsent(deps: ConnectionDeps, platform: string, instance: string, perInstance: InstanceConsent): Promise<OAuthConsent> {
  try {
    deps.checkServiceUrl(instance);
  } catch (error) {
    throw new DomainError('not_allowed', error instanceof Error ? error.message : 'URL not allowed', undefined, 'url_not_allowed');
  }
  const key = { platform, instance, redirect_uri: deps.callbackUrl };
  let app = await selectInstanceApp(deps.db, key);
  if (app === undefined) {
    let registered;
    try {
      registered = await perInstance.register(instance, deps.callbackUrl);
    } catch (error) {
      if (!isConnectError(error)) throw error;
      if (error.reason === 'url_not_allowed') throw new DomainError('not_allowed', error.message, undefined, 'url_not_allowed');
      throw new DomainError('platform_unreachable', `Platform unreachable: ${error.message}`);
    }
    app = await insertInstanceApp(deps.db, {
      ...key,
      client_id: registered.clientId,
      client_secret: deps.vault.seal({ clientSecret: registered.clientSecret }),
    });
  }
  return perInstance.consent(instance, { clientId: app.client_id, clientSecret: deps.vault.open<{ clientSecret: string }>(app.client_secret).clientSecret });
}

function toConnectionView(row: ConnectionRow, now: Date): Connection {
  const status = row.status === 'pending' && row.expires_at.getTime() <= now.getTime() ? 'expired' : row.status;
  return {
    id: row.id,
    platform: row.platform,
    status,
    authorizationUrl: status === 'pending' ? row.authorization_url : null,
    expiresAt: row.expires_at.toISOString(),
    accountId: row.account_id,
    accountIds: row.account_ids ?? [],
    error: status === 'failed' ? row.error : null,
    errorCode: status === 'failed' ? connectionErrorCodeOf(row.error_code) : null,
  };
}

type ConnectionErrorCode = NonNullable<Connection['errorCode']>;

const CONNECT_ERROR_CODES: Record<ConnectError['reason'], ConnectionErrorCode> = {
  invalid_credentials: 'invalid_credentials',
  url_not_allowed: 'url_not_allowed',
  unreachable: 'platform_unreachable',
  bad_answer: 'platform_error',
  client_refused: 'client_refused',
};

const CONNECTION_ERROR_CODES: readonly ConnectionErrorCode[] = [
  'access_denied',
  'client_refused',
  'invalid_credentials',
  'platform_unreachable',
  'platform_error',
  'credentials_too_large',
  'url_not_allowed',
  'platform_not_configured',
  'system_error',
];

/** A stored or domain code as the spec lists it; null for anything else (a connection that failed before codes were kept). */
function connectionErrorCodeOf(code: string | null): ConnectionErrorCode | null {
  return CONNECTION_ERROR_CODES.find((known) => known === code) ?? null;
}

function hashOf(state: string): string {
  return createHash('sha256').update(state).digest('hex');
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** A platform's error code as Herald repeats it: a short token, never free text from the request. */
function errorCode(error: string): string {
  return /^[A-Za-z0-9_.-]{1,64}$/.test(error) ? error : 'error';
}
