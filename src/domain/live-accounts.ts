import type { Kysely } from 'kysely';
import { findLiveAccount, insertAccount, markEnded, markExpiring, selectEndingAccounts, updateAccountCredentials } from '../db/queries/accounts.js';
import type { Database } from '../db/schema.js';
import type { ConnectedAccount, ConnectError } from './ports/publisher.js';
import type { PublisherRegistry } from './ports/publisher-registry.js';
import type { CredentialVault } from './ports/secrets.js';
import type { Account, AccountConnectInput, ErrorDetail } from './api-types.js';
import { toAccountView } from './accounts.js';
import { DomainError, errorName, invalidRequest } from './errors.js';
import type { Dependencies } from './dependencies.js';
import { CREDENTIALS_LIMIT_BYTES, CredentialsTooLargeError, refreshCredentials, sealCredentials } from './publishing/token-source.js';
import { newId } from './ids.js';
import type { KeepWithWork } from './idempotency.js';
import { credentialPlatforms, displayNameOf, livePlatform } from './platforms/live.js';
import { isStorableText } from './text.js';
import { requireOrganization, requireUser } from './users.js';
import { emitAccountEvent } from './webhooks/events.js';

export type AccountOwner = { userId: string } | { orgId: string };

export interface LiveConnectDeps {
  db: Kysely<Database>;
  now(): Date;
  vault: CredentialVault;
  publishers: PublisherRegistry;
  /** Refuses (throws, with a message for the caller) a service URL the SSRF guard would not call. */
  checkServiceUrl(url: string): void;
}

/**
 * Connects an account for a user or an organization: a sandbox account from a username, or a live one whose
 * credentials the platform has just accepted. Connecting a live account the owner already has
 * (the same platform account) refreshes its credentials and health and keeps its id, so posts
 * that target it keep working after a reconnect.
 */
export async function connectAccountFor(
  deps: LiveConnectDeps,
  owner: AccountOwner,
  input: AccountConnectInput,
  keep?: KeepWithWork<Account>,
): Promise<{ account: Account; created: boolean }> {
  const problems = connectProblems(input);
  if (problems.length > 0) throw invalidRequest(problems);
  await ('userId' in owner ? requireUser(deps.db, owner.userId) : requireOrganization(deps.db, owner.orgId));
  const owners = { owner_user_id: 'userId' in owner ? owner.userId : null, owner_org_id: 'orgId' in owner ? owner.orgId : null };
  if (input.credentials === undefined) {
    // A new sandbox account each time: its answer is kept with it (a live one is found again by its platform id).
    const account = await deps.db.transaction().execute(async (trx) => {
      const row = await insertAccount(trx, {
        id: newId('acc'),
        platform: input.platform,
        username: input.username ?? '',
        display_name: input.displayName ?? null,
        ...owners,
      });
      const view = toAccountView(row);
      await keep?.(trx, view);
      return view;
    });
    return { account, created: true };
  }

  const credentials = input.credentials as Record<string, string>;
  const serviceUrl = credentials[serviceKeyOf(input.platform) ?? ''] ?? '';
  try {
    deps.checkServiceUrl(serviceUrl);
  } catch (error) {
    throw new DomainError('not_allowed', error instanceof Error ? error.message : 'URL not allowed', undefined, 'url_not_allowed');
  }
  const publisher = deps.publishers.for({ mode: 'live', platform: input.platform });
  if (publisher?.connect === undefined) throw new Error(`no live publisher connects ${input.platform} accounts with credentials`);
  let connected;
  try {
    connected = await publisher.connect(credentials);
  } catch (error) {
    if (isConnectError(error)) {
      if (error.reason === 'unreachable') throw new DomainError('platform_unreachable', `Platform unreachable: ${error.message}`);
      if (error.reason === 'bad_answer') throw new DomainError('platform_unreachable', `Platform error: ${error.message}`, undefined, 'platform_error');
      // The message is the guard's own, `URL not allowed: …`.
      if (error.reason === 'url_not_allowed') throw new DomainError('not_allowed', error.message, undefined, 'url_not_allowed');
      throw new DomainError('not_allowed', `Invalid credentials: ${error.message}`, undefined, 'invalid_credentials');
    }
    throw error;
  }
  return storeConnectedAccount(deps, owner, input.platform, connected);
}

/**
 * Stores an account a platform has just vouched for: a live account the owner already has (the
 * same platform account) takes the new credentials and profile and is healthy again, keeping its
 * id; any other is created.
 */
export async function storeConnectedAccount(
  deps: Pick<LiveConnectDeps, 'db' | 'vault' | 'now'>,
  owner: AccountOwner,
  platform: string,
  connected: ConnectedAccount<unknown>,
): Promise<{ account: Account; created: boolean }> {
  const owners = { owner_user_id: 'userId' in owner ? owner.userId : null, owner_org_id: 'orgId' in owner ? owner.orgId : null };
  const problem = profileProblem(connected);
  if (problem !== null)
    throw new DomainError(
      'platform_unreachable',
      `Platform error: ${platform} answered a profile Herald cannot store: ${problem}`,
      undefined,
      'platform_error',
    );
  let sealed: string;
  try {
    sealed = sealCredentials(deps.vault, connected.credentials);
  } catch (error) {
    if (!(error instanceof CredentialsTooLargeError)) throw error;
    throw new DomainError(
      'platform_unreachable',
      `Platform error: ${displayNameOf(platform)} answered credentials larger than ${CREDENTIALS_LIMIT_BYTES / 1024} KiB, which Herald does not store`,
      undefined,
      'credentials_too_large',
    );
  }
  const existing = (await findLiveAccount(deps.db, owners, platform, connected.platformUserId)) ?? (await formerAccount(deps, owners, platform, connected));
  if (existing !== undefined) {
    const row = await updateAccountCredentials(deps.db, existing.id, {
      credentials: sealed,
      username: connected.username,
      display_name: connected.displayName,
      platform_user_id: connected.platformUserId,
      credentials_end_at: connected.endsAt ?? null,
    });
    return announceConnected(deps, owner, { account: toAccountView(row), created: false });
  }
  const row = await insertAccount(deps.db, {
    id: newId('acc'),
    platform: platform,
    username: connected.username,
    display_name: connected.displayName,
    ...owners,
    mode: 'live',
    platform_user_id: connected.platformUserId,
    credentials: sealed,
    credentials_end_at: connected.endsAt ?? null,
  });
  return announceConnected(deps, owner, { account: toAccountView(row), created: true });
}

/** Tells the owner's endpoints (a user's; an organization has none) that a live account is connected. */
async function announceConnected(deps: Pick<LiveConnectDeps, 'db' | 'now'>, owner: AccountOwner, result: { account: Account; created: boolean }) {
  if ('userId' in owner) await emitAccountEvent(deps.db, owner.userId, 'account.connected', result.account, deps.now());
  return result;
}

/** The longest profile fields Herald stores from a platform, in UTF-16 code units (a DID may be 2 KiB). */
export const PROFILE_LIMITS = { platformUserId: 2048, username: 512, displayName: 256 } as const;

/** Why a profile a platform answered cannot be stored or shown, or null when it can. */
function profileProblem(connected: ConnectedAccount<unknown>): string | null {
  const fields = { platformUserId: connected.platformUserId, username: connected.username, displayName: connected.displayName } as const;
  for (const [name, value] of Object.entries(fields) as [keyof typeof fields, unknown][]) {
    if (value === null && name === 'displayName') continue;
    if (typeof value !== 'string' || (value === '' && name !== 'displayName')) return `${name} is not text`;
    if (value.length > PROFILE_LIMITS[name]) return `${name} is longer than ${PROFILE_LIMITS[name]} characters`;
    if (!isStorableText(value)) return `${name} contains NUL or an unpaired surrogate`;
  }
  return null;
}

/**
 * The owner's account stored under the platform's former, not unique, id for this account, when
 * its stored service URL is this one's; accounts on other services that share the id stay apart.
 */
async function formerAccount(
  deps: Pick<LiveConnectDeps, 'db' | 'vault'>,
  owners: Parameters<typeof findLiveAccount>[1],
  platform: string,
  connected: ConnectedAccount<unknown>,
) {
  const serviceKey = serviceKeyOf(platform);
  if (connected.formerPlatformUserId === undefined || serviceKey === undefined) return undefined;
  const former = await findLiveAccount(deps.db, owners, platform, connected.formerPlatformUserId);
  if (former === undefined || former.credentials === null) return undefined;
  let stored: Record<string, unknown>;
  try {
    stored = deps.vault.open<Record<string, unknown>>(former.credentials);
  } catch {
    return undefined;
  }
  return stored[serviceKey] === (connected.credentials as Record<string, unknown>)[serviceKey] ? former : undefined;
}

/** The rules of a connect request a JSON schema cannot say, in the `details` shape of schema failures. */
function connectProblems(input: AccountConnectInput): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  if (input.credentials === undefined) {
    if (input.sandbox === false) problems.push(required(['credentials'], 'object', 'A live account needs credentials'));
    if (input.username === undefined) problems.push(required(['username'], 'string', 'A sandbox account needs a username'));
    return problems;
  }
  if (input.sandbox === true) problems.push(custom(['sandbox'], 'false or absent', 'true', 'A sandbox account takes no credentials'));
  for (const key of ['username', 'displayName'] as const) {
    if (input[key] !== undefined) {
      problems.push({ code: 'unrecognized_keys', expected: 'never', received: key, path: [key], message: `A live account's ${key} comes from the platform` });
    }
  }
  const platform = livePlatform(input.platform);
  if (platform?.connects === 'oauth') {
    problems.push(
      custom(
        ['credentials'],
        'absent',
        'an object',
        `${input.platform} accounts connect through the platform's consent page: start with POST /api/v1/connections`,
      ),
    );
    return problems;
  }
  if (platform === undefined) {
    const ids = credentialPlatforms().map((p) => p.id);
    problems.push(
      custom(
        ['platform'],
        ids.join(' or '),
        input.platform,
        `Only ${ids.join(' and ')} accounts can be connected live with credentials; connect a sandbox account instead`,
      ),
    );
    return problems;
  }
  const given = input.credentials as Record<string, string>;
  const keys = platform.credentials.map((field) => field.key);
  for (const key of keys) {
    if (given[key] === undefined) problems.push(required(['credentials', key], 'string', 'Required'));
  }
  for (const key of Object.keys(given)) {
    if (!keys.includes(key)) {
      problems.push({
        code: 'unrecognized_keys',
        expected: 'never',
        received: key,
        path: ['credentials', key],
        message: `${input.platform} takes no '${key}'`,
      });
    }
  }
  return problems;
}

function required(path: string[], expected: string, message: string): ErrorDetail {
  return { code: 'invalid_type', expected, received: 'undefined', path, message };
}

function custom(path: string[], expected: string, received: string, message: string): ErrorDetail {
  return { code: 'custom', expected, received, path, message };
}

function serviceKeyOf(platform: string): string | undefined {
  const live = livePlatform(platform);
  return live?.connects === 'credentials' ? live.serviceKey : undefined;
}

/** By name: the domain knows publishers only by their types. */
export function isConnectError(error: unknown): error is ConnectError {
  return error instanceof Error && error.name === 'ConnectError';
}

/** How long before credentials that cannot be refreshed end their account shows `expiring`. */
export const EXPIRY_NOTICE_MS = 7 * 24 * 3_600_000;

/**
 * Tells of credentials that cannot be refreshed and end soon (health `expiring`, `account.expiring`
 * once) or have ended (health `needs_reconnect`, `account.needs_reconnect`): to the account's user;
 * an organization's accounts show it in their health. Run by the worker's housekeeping.
 */
/** Credentials that end unless refreshed are renewed in their last 30 days, published to or not. */
const RENEW_WITHIN_MS = 30 * 86_400_000;

/**
 * Renews, through the token source, the credentials of accounts that end within 30 days and
 * whose platform renews them (Instagram, Threads): an account nobody publishes to keeps working.
 * One that cannot be renewed is left to end, announced as expiring, then ended.
 */
export async function renewEndingCredentials(
  deps: Pick<Dependencies, 'db' | 'vault' | 'publishers' | 'log' | 'now'>,
  now: Date,
): Promise<{ renewed: number; notRenewed: number }> {
  let renewed = 0;
  let notRenewed = 0;
  for (const account of await selectEndingAccounts(deps.db, new Date(now.getTime() + RENEW_WITHIN_MS), now)) {
    const publisher = deps.publishers.for(account);
    const renew = publisher?.renewCredentials?.bind(publisher);
    if (renew === undefined) continue;
    try {
      await refreshCredentials(deps, account.id, account.credentials_version, (current) => renew(current, now), publisher?.credentialsEndAt?.bind(publisher));
      renewed += 1;
    } catch (error) {
      notRenewed += 1;
      deps.log.info({ accountId: account.id, errorName: errorName(error) }, 'credentials not renewed; the account will show when they end');
    }
  }
  return { renewed, notRenewed };
}

export async function announceEndingCredentials(db: Kysely<Database>, now: Date): Promise<{ expiring: number; ended: number }> {
  const day = (at: Date) => at.toISOString().slice(0, 10);
  const expiring = await markExpiring(
    db,
    new Date(now.getTime() + EXPIRY_NOTICE_MS),
    now,
    (endsAt, platform) => `The ${displayNameOf(platform)} access token ends on ${day(endsAt)}; connect the account again before then`,
  );
  const ended = await markEnded(
    db,
    now,
    (endedAt, platform) => `The ${displayNameOf(platform)} access token ended on ${day(endedAt)}; connect the account again`,
  );
  for (const row of expiring) if (row.owner_user_id !== null) await emitAccountEvent(db, row.owner_user_id, 'account.expiring', toAccountView(row), now);
  for (const row of ended) if (row.owner_user_id !== null) await emitAccountEvent(db, row.owner_user_id, 'account.needs_reconnect', toAccountView(row), now);
  return { expiring: expiring.length, ended: ended.length };
}
