import type { Insertable, Kysely, Selectable } from 'kysely';
import type { AccountsTable, Database } from '../schema.js';

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
  values: Pick<AccountRow, 'credentials' | 'username' | 'display_name'>,
): Promise<AccountRow> {
  return db
    .updateTable('accounts')
    .set((eb) => ({ ...values, health: 'ok', health_message: null, credentials_version: eb('credentials_version', '+', 1) }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Sets disconnected_at once and erases the credentials; disconnecting again returns the first time. */
export async function disconnectAccount(db: Kysely<Database>, id: string, at: Date): Promise<Date | undefined> {
  await db.updateTable('accounts').set({ disconnected_at: at, credentials: null }).where('id', '=', id).where('disconnected_at', 'is', null).execute();
  const row = await db.selectFrom('accounts').select('disconnected_at').where('id', '=', id).executeTakeFirst();
  return row?.disconnected_at ?? undefined;
}

/** Connected accounts the user owns or reaches through an organization, oldest first; optionally only these ids. */
export async function selectActiveAccountsForUser(
  db: Kysely<Database>,
  userId: string,
  onlyIds?: readonly string[],
): Promise<AccountRow[]> {
  let query = db
    .selectFrom('accounts')
    .selectAll()
    .where('disconnected_at', 'is', null)
    .where((eb) =>
      eb.or([
        eb('owner_user_id', '=', userId),
        eb('owner_org_id', 'in', eb.selectFrom('memberships').select('org_id').where('user_id', '=', userId)),
      ]),
    );
  if (onlyIds !== undefined) {
    if (onlyIds.length === 0) return [];
    query = query.where('id', 'in', onlyIds);
  }
  return query.orderBy('created_at').orderBy('id').execute();
}
