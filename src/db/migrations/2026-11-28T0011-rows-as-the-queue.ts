import { sql, type Kysely } from 'kysely';

// Migrations import no application code (the schema as it was then), so they keep working as the code moves on.
type AnyDb = Kysely<unknown>;

/**
 * The posts' and deliveries' due times (next_check_at, due_at) are the only queue: workers take
 * them with FOR UPDATE SKIP LOCKED, woken by herald_due (0007). pg-boss's schema and the job id
 * each post kept go. Housekeeping deletes webhook events by age, found through their creation time.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('posts').dropColumn('publish_job_id').execute();
  await sql`drop schema if exists pgboss cascade`.execute(db);
  await db.schema.createIndex('webhook_events_created_at_idx').on('webhook_events').column('created_at').execute();
}

/** A version that uses pg-boss reinstalls its schema when it starts; posts saved before then have no job, and are found by their next_check_at alone. */
export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropIndex('webhook_events_created_at_idx').execute();
  await db.schema.alterTable('posts').addColumn('publish_job_id', 'text').execute();
}
