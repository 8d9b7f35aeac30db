import { sql, type Kysely } from 'kysely';

// Migrations import no application code (the schema as it was then), so they keep working as the code moves on.
type AnyDb = Kysely<unknown>;

export async function up(db: AnyDb): Promise<void> {
  // One row per Idempotency-Key a caller sent to an operation: who holds it, and the answer once there is one.
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('operation_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    // A hash of the request (path, query, body), so the same key with another request is refused.
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    // Which request holds or answered the key (a random token): a request frees only its own claim.
    .addColumn('claim', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('in_progress', 'done')`))
    .addColumn('status_code', 'integer')
    .addColumn('body', 'text')
    // A request in progress holds the key until then; past it, its process is taken as gone.
    .addColumn('locked_until', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pkey', ['user_id', 'operation_id', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expires_at_idx').on('idempotency_keys').column('expires_at').execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute();
}
