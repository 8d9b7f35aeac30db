import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

export async function insertOrganization(db: Kysely<Database>, org: { id: string; name: string }): Promise<void> {
  await db.insertInto('organizations').values(org).execute();
}

export async function organizationExists(db: Kysely<Database>, id: string): Promise<boolean> {
  const row = await db.selectFrom('organizations').select('id').where('id', '=', id).executeTakeFirst();
  return row !== undefined;
}

/** Inserts the membership; adding an existing member again changes nothing. */
export async function insertMembership(db: Kysely<Database>, orgId: string, userId: string): Promise<void> {
  await db
    .insertInto('memberships')
    .values({ org_id: orgId, user_id: userId })
    .onConflict((oc) => oc.columns(['org_id', 'user_id']).doNothing())
    .execute();
}
