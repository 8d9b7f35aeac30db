import { sql, type Kysely } from 'kysely';

// Migrations import no application code (the schema as it was then), so they keep working as the code moves on.
type AnyDb = Kysely<unknown>;

/**
 * Platforms whose every server authorizes on its own (Mastodon): Herald registers itself as an
 * app on an instance once per callback URL and reuses it (the secret sealed), and a connection
 * remembers the instance it goes through.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('instance_apps')
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('instance', 'text', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('client_secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('instance_apps_pkey', ['platform', 'instance', 'redirect_uri'])
    .execute();
  await db.schema.alterTable('connections').addColumn('instance', 'text').execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('connections').dropColumn('instance').execute();
  await db.schema.dropTable('instance_apps').execute();
}
