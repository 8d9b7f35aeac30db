import type { Kysely, Selectable } from 'kysely';
import type { AccountsTable, Database } from '../schema.js';

export type AccountRow = Selectable<AccountsTable>;

export async function insertAccount(
  db: Kysely<Database>,
  account: Pick<AccountRow, 'id' | 'platform' | 'username' | 'display_name' | 'owner_user_id' | 'owner_org_id'>,
): Promise<void> {
  await db.insertInto('accounts').values(account).execute();
}

/** Sets disconnected_at once; disconnecting again returns the first time. */
export async function disconnectAccount(db: Kysely<Database>, id: string, at: Date): Promise<Date | undefined> {
  await db.updateTable('accounts').set({ disconnected_at: at }).where('id', '=', id).where('disconnected_at', 'is', null).execute();
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
