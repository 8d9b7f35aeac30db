import { sql, type Kysely } from 'kysely';

// Migrations import no application code (the schema as it was then), so they keep working as the code moves on.
type AnyDb = Kysely<unknown>;

/**
 * The attempts in flight (deliveries a worker is sending), counted at every claim to hold each
 * endpoint and each user to their share of the workers: a handful of rows, whatever the backlog.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_in_flight_idx')
    .on('webhook_deliveries')
    .column('endpoint_id')
    .where(sql.ref('state'), '=', 'delivering')
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_in_flight_idx').execute();
}
