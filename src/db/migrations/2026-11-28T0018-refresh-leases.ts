import type { Kysely } from 'kysely';

// Migrations import no application code (the schema as it was then), so they keep working as the code moves on.
type AnyDb = Kysely<unknown>;

/**
 * A refresh of an account's credentials is held by a lease written on the account and committed,
 * not by a row lock: the platform is called with no connection held, and a concurrent refresher
 * waits for the lease to be released or to run out.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('accounts').addColumn('refresh_lease_id', 'text').addColumn('refresh_lease_until', 'timestamptz').execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('accounts').dropColumn('refresh_lease_id').dropColumn('refresh_lease_until').execute();
}
