import { sql, type Kysely } from 'kysely';

// Migrations import no application code (the schema as it was then), so they keep working as the code moves on.
type AnyDb = Kysely<unknown>;

/**
 * Credentials that cannot be refreshed (a LinkedIn self-serve token lasts 60 days) end on a known
 * day: kept beside them, so the worker can say so a week before (health `expiring`) and mark the
 * account for reconnection when they end, without opening any sealed credentials.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('accounts').addColumn('credentials_end_at', 'timestamptz').execute();
  await sql`alter table accounts drop constraint if exists accounts_health_check`.execute(db);
  await sql`alter table accounts add constraint accounts_health_check check (health in ('ok', 'expiring', 'needs_reconnect'))`.execute(db);
  await db.schema
    .createIndex('accounts_credentials_end_at')
    .on('accounts')
    .column('credentials_end_at')
    .where(sql.ref('credentials_end_at'), 'is not', null)
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropIndex('accounts_credentials_end_at').execute();
  await sql`update accounts set health = 'ok' where health = 'expiring'`.execute(db);
  await sql`alter table accounts drop constraint if exists accounts_health_check`.execute(db);
  await sql`alter table accounts add constraint accounts_health_check check (health in ('ok', 'needs_reconnect'))`.execute(db);
  await db.schema.alterTable('accounts').dropColumn('credentials_end_at').execute();
}
