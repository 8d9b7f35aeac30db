import type { Kysely } from 'kysely';
import {
  disconnectAccount as setDisconnected,
  insertAccount,
  selectAccountAccess,
  selectActiveAccountsForUser,
  type ReachableAccount,
} from '../db/queries/accounts.js';
import type { Database } from '../db/schema.js';
import type { Account, AccountList } from './api-types.js';
import type { Dependencies } from './dependencies.js';
import { DomainError, errorName } from './errors.js';
import { isWellFormedId, newId } from './ids.js';
import { registeredInstanceConsent } from './connections.js';
import { isKnownPlatform, platformRules } from './platforms/index.js';
import { requireStorableText } from './text.js';
import { requireOrganization, requireUser } from './users.js';

export async function listAccounts(db: Kysely<Database>, userId: string): Promise<AccountList> {
  const rows = await selectActiveAccountsForUser(db, userId);
  return { data: rows.map(toAccountView) };
}

export function toAccountView(row: ReachableAccount): Account {
  return {
    id: row.id,
    platform: row.platform,
    username: row.username,
    displayName: row.display_name,
    mode: row.mode,
    health: row.health,
    healthMessage: row.health_message,
  };
}

/**
 * Disconnects one of the user's own accounts, or an account of an organization they own. An
 * organization's account is shared: disconnecting it fails every member's posts on it, so a plain
 * member may post to it but not disconnect it (the operator always can, with the CLI). An account
 * the user cannot post to at all is not found.
 */
type RevokeDeps = Pick<Dependencies, 'db' | 'vault' | 'oauth' | 'instanceOAuth' | 'callbackUrl' | 'log'>;

export async function disconnectAccountOf(deps: RevokeDeps, userId: string, id: string, now: Date): Promise<{ revoked: Promise<void> }> {
  const access = isWellFormedId('acc', id) ? await selectAccountAccess(deps.db, userId, id) : undefined;
  if (access === undefined) throw new DomainError('not_found', ACCOUNT_NOT_FOUND);
  if (access.owner_org_id !== null && access.role !== 'owner') throw new DomainError('forbidden', ONLY_OWNERS_DISCONNECT, undefined, 'not_an_owner');
  const done = await setDisconnected(deps.db, id, now);
  return { revoked: revokeErased(deps, done?.erased ?? null) };
}

/**
 * Revokes the credentials a disconnect erased, at the platforms that offer revocation (on an
 * instance, through Herald's app there, which issued the token of a consent): best effort, after
 * the disconnect has committed; it never fails the disconnect.
 */
async function revokeErased(deps: RevokeDeps, erased: { platform: string; credentials: string | null } | null): Promise<void> {
  if (erased === null || erased.credentials === null) return;
  try {
    const credentials = deps.vault.open<{ instance?: unknown }>(erased.credentials);
    const consent =
      deps.oauth[erased.platform] ??
      (typeof credentials.instance === 'string' ? await registeredInstanceConsent(deps, erased.platform, credentials.instance) : undefined);
    await consent?.revoke(credentials);
  } catch (error) {
    deps.log.error({ platform: erased.platform, errorName: errorName(error) }, 'could not revoke the credentials of a disconnected account');
  }
}

export const ACCOUNT_NOT_FOUND = 'Account not found';
export const ONLY_OWNERS_DISCONNECT = "Only an owner of the account's organization can disconnect it";

export interface ConnectAccount {
  platform: string;
  username: string;
  displayName: string | null;
  owner: { userId: string } | { orgId: string };
}

export async function connectAccount(db: Kysely<Database>, input: ConnectAccount): Promise<{ id: string }> {
  if (!isKnownPlatform(input.platform)) {
    const known = platformRules.map((p) => p.id).join(', ');
    throw new DomainError('invalid_request', `Unknown platform: ${input.platform} (one of ${known})`);
  }
  if (input.username.trim() === '') throw new DomainError('invalid_request', 'Username must not be empty');
  requireStorableText(input.username, 'Username');
  if (input.displayName !== null) requireStorableText(input.displayName, 'Display name');
  const owner = input.owner;
  await ('userId' in owner ? requireUser(db, owner.userId) : requireOrganization(db, owner.orgId));
  const id = newId('acc');
  await insertAccount(db, {
    id,
    platform: input.platform,
    username: input.username,
    display_name: input.displayName,
    owner_user_id: 'userId' in owner ? owner.userId : null,
    owner_org_id: 'orgId' in owner ? owner.orgId : null,
  });
  return { id };
}

export async function disconnectAccount(deps: RevokeDeps, id: string, now: Date): Promise<{ id: string; disconnectedAt: string }> {
  const done = isWellFormedId('acc', id) ? await setDisconnected(deps.db, id, now) : undefined;
  if (done === undefined) throw new DomainError('not_found', `Account not found: ${id}`);
  await revokeErased(deps, done.erased);
  return { id, disconnectedAt: done.disconnectedAt.toISOString() };
}
