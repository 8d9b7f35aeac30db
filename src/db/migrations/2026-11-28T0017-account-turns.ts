import type { Kysely } from 'kysely';

// Migrations import no application code (the schema as it was then), so they keep working as the code moves on.
type AnyDb = Kysely<unknown>;

/**
 * A live account's line: the last turn handed to a post its pace holds back. A post joining the
 * line waits one spacing after it, so a backlog on one account wakes a post a turn, not all of it.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('accounts').addColumn('last_turn_at', 'timestamptz').execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('accounts').dropColumn('last_turn_at').execute();
}
