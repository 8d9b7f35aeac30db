import type { Kysely } from 'kysely';

// Migrations import no application code (the schema as it was then), so they keep working as the code moves on.
type AnyDb = Kysely<unknown>;

/** A failed connection's code beside its message, for programs to match on (`client_refused`, …). */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('connections').addColumn('error_code', 'text').execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('connections').dropColumn('error_code').execute();
}
