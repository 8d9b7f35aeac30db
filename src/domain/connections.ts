import { createHash, randomBytes } from 'node:crypto';
import {
  bindConnectionBrowser,
  deleteConnectionsEndedBefore,
  deleteUnusedInstanceApps,
  endConnection,
  insertConnection,
  insertInstanceApp,
  isPendingState,
  markInstanceAppUsed,
  selectConnection,
  selectInstanceApp,
  takeConnectionByState,
  type ConnectionRow,
} from '../db/queries/connections.js';
import type { Kysely } from 'kysely';
import type { ConnectionStatus, Database } from '../db/schema.js';
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
/**
 * How long a connection is kept once it has ended or expired (getConnection shows it until then),
 * and how long an app Herald registered on an instance is kept if no connection through it connects.
 */
export const CONNECTION_RETENTION_MS = 7 * 24 * 60 * 60_000;
/** Longer states and tokens are not Herald's (it sends 43 characters); they are not looked up. */
const MAX_STATE_LENGTH = 512;

export type ConnectionDeps = Pick<
  Dependencies,
  'db' | 'vault' | 'oauth' | 'instanceOAuth' | 'checkServiceUrl' | 'callbackUrl' | 'consentStartUrl' | 'returnUrlOrigins' | 'log' | 'now'
>;

/** What Herald keeps, sealed, of a pending connection's links. */
interface ConsentLink {
  consentUrl: string;
  startToken: string;
}

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
  if (input.returnUrl !== undefined && !deps.returnUrlOrigins.includes(new URL(input.returnUrl).origin)) {
    throw invalidRequest([
      {
        code: 'invalid_string',
        expected: 'a URL on an origin listed in HERALD_RETURN_URL_ORIGINS',
        received: input.returnUrl,
        path: ['returnUrl'],
        message:
          deps.returnUrlOrigins.length === 0
            ? 'returnUrl is not allowed: this server lists no return origins (HERALD_RETURN_URL_ORIGINS)'
            : `returnUrl must be on one of this server's return origins: ${deps.returnUrlOrigins.join(', ')}`,
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
  const startToken = randomBytes(32).toString('base64url');
  const started = await consent.begin(state, deps.callbackUrl);
  const link: ConsentLink = { consentUrl: started.authorizationUrl, startToken };
  const row = await insertConnection(deps.db, {
    id: newId('conn'),
    user_id: userId,
    platform: platform.id,
    status: 'pending',
    state_hash: hashOf(state),
    code_verifier: started.codeVerifier === null ? null : deps.vault.seal({ codeVerifier: started.codeVerifier }),
    consent_link: deps.vault.seal(link),
    start_hash: hashOf(startToken),
    return_url: input.returnUrl ?? null,
    instance,
    created_at: now,
    expires_at: new Date(now.getTime() + CONNECTION_LIFETIME_MS),
  });
  return toConnectionView(deps, row, now);
}

export async function getConnection(deps: Pick<Dependencies, 'db' | 'vault' | 'consentStartUrl'>, userId: string, id: string, now: Date): Promise<Connection> {
  const row = isWellFormedId('conn', id) ? await selectConnection(deps.db, userId, id) : undefined;
  if (row === undefined) throw new DomainError('not_found', 'Connection not found');
  return toConnectionView(deps, row, now);
}

/**
 * Opens a consent link in a browser: the first browser to open it is bound to the connection
 * (`browserSecret`, kept by the caller in a cookie, here as its hash) and sent to the platform's
 * consent page; any later opening, an unknown token or an ended connection gets nothing.
 */
export async function openConsentLink(
  deps: Pick<Dependencies, 'db' | 'vault'>,
  token: string,
  now: Date,
): Promise<{ consentUrl: string; browserSecret: string; connectionId: string; expiresAt: Date } | undefined> {
  if (token === '' || token.length > MAX_STATE_LENGTH) return undefined;
  const browserSecret = randomBytes(32).toString('base64url');
  const row = await bindConnectionBrowser(deps.db, hashOf(token), hashOf(browserSecret), now);
  if (row === undefined || row.consent_link === null) return undefined;
  const link = deps.vault.open<ConsentLink>(row.consent_link);
  return { consentUrl: link.consentUrl, browserSecret, connectionId: row.id, expiresAt: row.expires_at };
}

/**
 * What the callback came to: a state Herald does not hold (or no longer), a state of a pending
 * connection that this browser did not open (nothing changes), or a connection that has ended.
 */
export type CallbackOutcome = { kind: 'unknown_state' } | { kind: 'other_browser' } | { kind: 'ended'; connection: Connection; returnUrl: string | null };

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
export async function completeConnection(deps: ConnectionDeps, query: CallbackQuery, browserSecrets: readonly string[], now: Date): Promise<CallbackOutcome> {
  if (query.state === undefined || query.state === '' || query.state.length > MAX_STATE_LENGTH) return { kind: 'unknown_state' };
  const stateHash = hashOf(query.state);
  const taken = await takeConnectionByState(deps.db, stateHash, browserSecrets.filter((s) => s.length <= MAX_STATE_LENGTH).map(hashOf));
  if (taken === undefined) return (await isPendingState(deps.db, stateHash)) ? { kind: 'other_browser' } : { kind: 'unknown_state' };
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
    return { kind: 'ended', connection: toConnectionView(deps, row ?? taken, now), returnUrl: taken.return_url };
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
    if (taken.instance !== null)
      await markInstanceAppUsed(deps.db, { platform: taken.platform, instance: taken.instance, redirect_uri: deps.callbackUrl }, now);
    return await end('connected', { account_ids: ids });
  } catch (error) {
    if (isConnectError(error)) return end('failed', { error: error.message, code: CONNECT_ERROR_CODES[error.reason] });
    if (error instanceof DomainError) return end('failed', { error: error.message, code: connectionErrorCodeOf(error.code) ?? 'system_error' });
    deps.log.error({ connectionId: taken.id, errorName: errorName(error) }, 'connecting an account failed');
    return end('failed', { error: `Herald failed while connecting the ${platform} account; start again`, code: 'system_error' });
  }
}

/**
 * Housekeeping: deletes connections that ended or expired longer than the retention ago, and the
 * apps registered on instances that long ago through which no connection ever connected an account.
 */
export async function purgeEndedConnections(db: Kysely<Database>, now: Date): Promise<{ connections: number; instanceApps: number }> {
  const before = new Date(now.getTime() - CONNECTION_RETENTION_MS);
  return { connections: await deleteConnectionsEndedBefore(db, before), instanceApps: await deleteUnusedInstanceApps(db, before, now) };
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

/**
 * The consent flow through Herald's app already registered on an instance (to revoke a token it
 * issued); undefined when Herald has none there, never registering one.
 */
export async function registeredInstanceConsent(
  deps: Pick<Dependencies, 'db' | 'vault' | 'instanceOAuth' | 'callbackUrl'>,
  platform: string,
  instance: string,
): Promise<OAuthConsent | undefined> {
  const perInstance = deps.instanceOAuth[platform];
  const app = perInstance === undefined ? undefined : await selectInstanceApp(deps.db, { platform, instance, redirect_uri: deps.callbackUrl });
  if (perInstance === undefined || app === undefined) return undefined;
  return perInstance.consent(instance, { clientId: app.client_id, clientSecret: deps.vault.open<{ clientSecret: string }>(app.client_secret).clientSecret });
}

function toConnectionView(deps: Pick<Dependencies, 'vault' | 'consentStartUrl'>, row: ConnectionRow, now: Date): Connection {
  const status = row.status === 'pending' && row.expires_at.getTime() <= now.getTime() ? 'expired' : row.status;
  const link = status === 'pending' && row.consent_link !== null ? deps.vault.open<ConsentLink>(row.consent_link) : undefined;
  return {
    id: row.id,
    platform: row.platform,
    status,
    authorizationUrl: link === undefined ? null : `${deps.consentStartUrl}/${link.startToken}`,
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
