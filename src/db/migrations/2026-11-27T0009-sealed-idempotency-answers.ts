import { sql, type Kysely } from 'kysely';

// Migrations import no application code (the schema as it was then), so they keep working as the code moves on.
type AnyDb = Kysely<unknown>;

/**
 * A kept answer that carries a secret (a webhook's signing secret) is kept sealed with the service's
 * secret key, as the endpoint keeps it; `sealed` says which answers are. The answers of those
 * operations kept before held the secret in clear: they are forgotten rather than left for the rest
 * of their 24 hours (a retry with one of their keys does the work again).
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('idempotency_keys')
    .addColumn('sealed', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
  await sql`delete from idempotency_keys where operation_id in ('createWebhook', 'rotateWebhookSecret') and state = 'done'`.execute(db);
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('idempotency_keys').dropColumn('sealed').execute();
}
