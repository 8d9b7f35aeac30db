import { sql, type Kysely } from 'kysely';

// Migrations import no application code (the schema as it was then), so they keep working as the code moves on.
type AnyDb = Kysely<unknown>;

/**
 * A consent link is Herald's own one-time page (`/oauth/start/{token}`), which binds the first
 * browser that opens it (a cookie; its SHA-256 here) before sending it to the platform. The
 * platform's consent URL, which holds the raw state, is kept only sealed (`consent_link`, with the
 * start token); the start token is looked up by its SHA-256. Pending connections of before have
 * their consent URL in clear: they end now (the person starts again). An instance app records
 * when a connection through it first connected an account (`used_at`): housekeeping removes
 * apps that never did.
 */
export async function up(db: AnyDb): Promise<void> {
  await sql`update connections set expires_at = least(expires_at, now()), state_hash = null where status = 'pending'`.execute(db);
  await db.schema
    .alterTable('connections')
    .dropColumn('authorization_url')
    .addColumn('consent_link', 'text')
    .addColumn('start_hash', 'text', (c) => c.unique())
    .addColumn('browser_hash', 'text')
    .execute();
  await db.schema.alterTable('instance_apps').addColumn('used_at', 'timestamptz').execute();
  // Apps of before may have issued tokens: kept as used.
  await sql`update instance_apps set used_at = created_at`.execute(db);
  await db.schema.createIndex('connections_instance').on('connections').columns(['platform', 'instance']).execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropIndex('connections_instance').execute();
  await db.schema.alterTable('instance_apps').dropColumn('used_at').execute();
  await db.schema
    .alterTable('connections')
    .dropColumn('consent_link')
    .dropColumn('start_hash')
    .dropColumn('browser_hash')
    .addColumn('authorization_url', 'text')
    .execute();
}
