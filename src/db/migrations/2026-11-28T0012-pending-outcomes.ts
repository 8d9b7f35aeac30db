import type { Kysely } from 'kysely';

// Migrations import no application code (the schema as it was then), so they keep working as the code moves on.
type AnyDb = Kysely<unknown>;

/**
 * Work a platform takes minutes over (a container processing, an upload session): a part keeps
 * the publisher's own record of how far it got (a container id, a session URL), and a target
 * waiting on the platform says so, so that the look at its due time resumes the same attempt
 * rather than taking it for one a stopped worker left in doubt.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('target_parts').addColumn('progress', 'text').execute();
  await db.schema
    .alterTable('post_targets')
    .addColumn('awaiting_platform', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('post_targets').dropColumn('awaiting_platform').execute();
  await db.schema.alterTable('target_parts').dropColumn('progress').execute();
}
