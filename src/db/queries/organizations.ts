import type { Kysely } from 'kysely';
import type { Database, MembershipRole } from '../schema.js';

export async function insertOrganization(db: Kysely<Database>, org: { id: string; name: string }): Promise<void> {
  await db.insertInto('organizations').values(org).execute();
}

export async function organizationExists(db: Kysely<Database>, id: string): Promise<boolean> {
  const row = await db.selectFrom('organizations').select('id').where('id', '=', id).executeTakeFirst();
  return row !== undefined;
}

/**
 * Inserts the membership with `role` (a plain member when null); for an existing member, sets
 * `role` or, when null, keeps theirs. Returns the role the member now has.
 */
export async function upsertMembership(db: Kysely<Database>, orgId: string, userId: string, role: MembershipRole | null): Promise<MembershipRole> {
  const row = await db
    .insertInto('memberships')
    .values({ org_id: orgId, user_id: userId, role: role ?? 'member' })
    .onConflict((oc) => oc.columns(['org_id', 'user_id']).doUpdateSet((eb) => ({ role: role ?? eb.ref('memberships.role') })))
    .returning('role')
    .executeTakeFirstOrThrow();
  return row.role;
}

/** Deletes the membership; the role it had, or undefined when there was none. */
export async function deleteMembership(db: Kysely<Database>, orgId: string, userId: string): Promise<MembershipRole | undefined> {
  const row = await db.deleteFrom('memberships').where('org_id', '=', orgId).where('user_id', '=', userId).returning('role').executeTakeFirst();
  return row?.role;
}
