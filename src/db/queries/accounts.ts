import type { Insertable, Kysely, Selectable } from 'kysely';
import { compiledOnce } from '../compiled-query.js';
import type { AccountsTable, Database, MembershipRole } from '../schema.js';

export type AccountRow = Selectable<AccountsTable>;

export async function insertAccount(db: Kysely<Database>, account: Insertable<AccountsTable>): Promise<AccountRow> {
  return db.insertInto('accounts').values(account).returningAll().executeTakeFirstOrThrow();
}

/** The owner's connected live account for this platform account, if they have one. */
export async function findLiveAccount(
  db: Kysely<Database>,
  owner: Pick<AccountRow, 'owner_user_id' | 'owner_org_id'>,
  platform: string,
  platformUserId: string,
): Promise<AccountRow | undefined> {
  return db
    .selectFrom('accounts')
    .selectAll()
    .where((eb) => (owner.owner_user_id !== null ? eb('owner_user_id', '=', owner.owner_user_id) : eb('owner_org_id', '=', owner.owner_org_id)))
    .where('platform', '=', platform)
    .where('platform_user_id', '=', platformUserId)
    .where('mode', '=', 'live')
    .where('disconnected_at', 'is', null)
    .executeTakeFirst();
}

/** New credentials after a reconnect: the account is healthy again, and its version moves on so no older refresh lands over them. */
export async function updateAccountCredentials(
  db: Kysely<Database>,
  id: string,
  values: Pick<AccountRow, 'credentials' | 'username' | 'display_name' | 'platform_user_id' | 'credentials_end_at'>,
): Promise<AccountRow> {
  return db
    .updateTable('accounts')
    .set((eb) => ({ ...values, health: 'ok', health_message: null, credentials_version: eb('credentials_version', '+', 1) }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Sets disconnected_at once and erases the credentials (returned, sealed, to be revoked); disconnecting again returns the first time. */
export async function disconnectAccount(
  db: Kysely<Database>,
  id: string,
  at: Date,
): Promise<{ disconnectedAt: Date; erased: Pick<AccountRow, 'platform' | 'credentials'> | null } | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('accounts').select(['platform', 'credentials', 'disconnected_at']).where('id', '=', id).forUpdate().executeTakeFirst();
    if (row === undefined) return undefined;
    if (row.disconnected_at !== null) return { disconnectedAt: row.disconnected_at, erased: null };
    await trx.updateTable('accounts').set({ disconnected_at: at, credentials: null }).where('id', '=', id).execute();
    return { disconnectedAt: at, erased: { platform: row.platform, credentials: row.credentials } };
  });
}

/** What a user sees of an account they can post to. */
export type ReachableAccount = Pick<AccountRow, 'id' | 'platform' | 'username' | 'display_name' | 'mode' | 'health' | 'health_message' | 'created_at'>;

/**
 * Connected accounts the user owns or reaches through an organization, oldest first; optionally
 * only these ids. Two branches, each on its own index (owner_user_id; memberships then
 * owner_org_id), where one OR of both would scan every account.
 */
export async function selectActiveAccountsForUser(db: Kysely<Database>, userId: string, onlyIds?: readonly string[]): Promise<ReachableAccount[]> {
  if (onlyIds === undefined) return reachableAccounts(db, userId);
  return onlyIds.length === 0 ? [] : reachableAccountsAmong(db, userId, [...onlyIds]);
}

const reachableAccounts = compiledOnce((db, userId: string) => reachable(db, userId));

/** The ids are one array parameter (`= any($2)`), so every list length runs the same compiled statement. */
const reachableAccountsAmong = compiledOnce((db, userId: string, ids: string[]) => reachable(db, userId, ids));

function reachable(db: Kysely<Database>, userId: string, ids?: string[]) {
  const own = db
    .selectFrom('accounts')
    .select(['id', 'platform', 'username', 'display_name', 'mode', 'health', 'health_message', 'created_at'])
    .where('owner_user_id', '=', userId)
    .where('disconnected_at', 'is', null)
    .$if(ids !== undefined, (q) => q.where((eb) => eb('id', '=', eb.fn.any(eb.val(ids ?? [])))));
  const throughOrganizations = db
    .selectFrom('memberships')
    .innerJoin('accounts', 'accounts.owner_org_id', 'memberships.org_id')
    .select([
      'accounts.id',
      'accounts.platform',
      'accounts.username',
      'accounts.display_name',
      'accounts.mode',
      'accounts.health',
      'accounts.health_message',
      'accounts.created_at',
    ])
    .where('memberships.user_id', '=', userId)
    .where('accounts.disconnected_at', 'is', null)
    .$if(ids !== undefined, (q) => q.where((eb) => eb('accounts.id', '=', eb.fn.any(eb.val(ids ?? [])))));
  return own.unionAll(throughOrganizations).orderBy('created_at').orderBy('id');
}

/**
 * A connected account the user reaches: their own (`owner_org_id` null), or an organization's
 * with the user's `role` in it. Undefined when the user reaches no such account.
 */
export async function selectAccountAccess(
  db: Kysely<Database>,
  userId: string,
  id: string,
): Promise<{ owner_org_id: string | null; role: MembershipRole | null } | undefined> {
  return db
    .selectFrom('accounts')
    .leftJoin('memberships', (join) => join.onRef('memberships.org_id', '=', 'accounts.owner_org_id').on('memberships.user_id', '=', userId))
    .select(['accounts.owner_org_id', 'memberships.role'])
    .where('accounts.id', '=', id)
    .where('accounts.disconnected_at', 'is', null)
    .where((eb) => eb.or([eb('accounts.owner_user_id', '=', userId), eb('memberships.user_id', 'is not', null)]))
    .executeTakeFirst();
}

/** Those of these accounts, connected or not, that the user owns or reaches through an organization they are a member of. */
export async function selectAccountIdsReachableBy(db: Kysely<Database>, userId: string, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('accounts')
    .select('id')
    .where('id', 'in', ids)
    .where((eb) =>
      eb.or([eb('owner_user_id', '=', userId), eb('owner_org_id', 'in', eb.selectFrom('memberships').select('org_id').where('user_id', '=', userId))]),
    )
    .execute();
  return rows.map((r) => r.id);
}

/** Live accounts whose credentials end by `before` and that have not been told yet: now `expiring`, with why. */
/** Live accounts whose credentials end before `before` (and have not yet), with what renewing them needs. */
export async function selectEndingAccounts(
  db: Kysely<Database>,
  before: Date,
  now: Date,
): Promise<Pick<AccountRow, 'id' | 'platform' | 'mode' | 'credentials_version'>[]> {
  return db
    .selectFrom('accounts')
    .select(['id', 'platform', 'mode', 'credentials_version'])
    .where('mode', '=', 'live')
    .where('health', 'in', ['ok', 'expiring'])
    .where('disconnected_at', 'is', null)
    .where('credentials_end_at', '<=', before)
    .where('credentials_end_at', '>', now)
    .execute();
}

export async function markExpiring(db: Kysely<Database>, before: Date, now: Date, message: (endsAt: Date, platform: string) => string): Promise<AccountRow[]> {
  const due = await db
    .selectFrom('accounts')
    .select(['id', 'platform', 'credentials_end_at'])
    .where('health', '=', 'ok')
    .where('disconnected_at', 'is', null)
    .where('credentials_end_at', '<=', before)
    .where('credentials_end_at', '>', now)
    .execute();
  const marked: AccountRow[] = [];
  for (const account of due) {
    const row = await db
      .updateTable('accounts')
      .set({ health: 'expiring', health_message: message(account.credentials_end_at as Date, account.platform) })
      .where('id', '=', account.id)
      .where('health', '=', 'ok')
      .returningAll()
      .executeTakeFirst();
    if (row !== undefined) marked.push(row);
  }
  return marked;
}

/** Live accounts whose credentials have ended: now `needs_reconnect`, with why. */
export async function markEnded(db: Kysely<Database>, now: Date, message: (endedAt: Date, platform: string) => string): Promise<AccountRow[]> {
  const due = await db
    .selectFrom('accounts')
    .select(['id', 'platform', 'credentials_end_at'])
    .where('health', 'in', ['ok', 'expiring'])
    .where('disconnected_at', 'is', null)
    .where('credentials_end_at', '<=', now)
    .execute();
  const marked: AccountRow[] = [];
  for (const account of due) {
    const row = await db
      .updateTable('accounts')
      .set({ health: 'needs_reconnect', health_message: message(account.credentials_end_at as Date, account.platform) })
      .where('id', '=', account.id)
      .where('health', 'in', ['ok', 'expiring'])
      .returningAll()
      .executeTakeFirst();
    if (row !== undefined) marked.push(row);
  }
  return marked;
}
