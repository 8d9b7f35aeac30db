import { sql, type Kysely } from 'kysely';

// Migrations import no application code (the schema as it was then), so they keep working as the code moves on.
type AnyDb = Kysely<unknown>;

/**
 * A connection: one trip of a person through a platform's consent page, started by a user. The
 * state Herald sent is kept only as its SHA-256 (a leaked row cannot complete a connection), the
 * PKCE verifier only sealed with the credential key; both are cleared once the connection ends.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('connections')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'connected', 'failed', 'expired')`))
    .addColumn('state_hash', 'text', (c) => c.unique())
    .addColumn('code_verifier', 'text')
    .addColumn('authorization_url', 'text')
    .addColumn('return_url', 'text')
    .addColumn('account_id', 'text', (c) => c.references('accounts.id').onDelete('set null'))
    .addColumn('error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('ended_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('connections_user_id').on('connections').column('user_id').execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('connections').execute();
}
