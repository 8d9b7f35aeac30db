import { sql, type Kysely } from 'kysely';

// Migrations import no application code (the schema as it was then), so they keep working as the code moves on.
type AnyDb = Kysely<unknown>;

/** One consent may connect several accounts (every Facebook Page the person chose): the connection keeps them all, in order. */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('connections')
    .addColumn('account_ids', sql`text[]`)
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('connections').dropColumn('account_ids').execute();
}
