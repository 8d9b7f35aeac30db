import { sql, type Kysely } from 'kysely';

// Migrations import no application code (the schema as it was then), so they keep working as the code moves on.
type AnyDb = Kysely<unknown>;

/**
 * Every change to a key (a revocation, an expiry moved, a row deleted, by Herald or by hand in SQL)
 * is announced on the `herald_api_keys` channel as it commits, with the key's id, so that servers
 * holding the key in their lookup cache drop it at once.
 */
export async function up(db: AnyDb): Promise<void> {
  await sql`
    create function herald_announce_api_key_change() returns trigger language plpgsql as $$
    begin
      perform pg_notify('herald_api_keys', old.id);
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger api_keys_announce_change after update or delete on api_keys
    for each row execute function herald_announce_api_key_change()`.execute(db);
}

export async function down(db: AnyDb): Promise<void> {
  await sql`drop trigger api_keys_announce_change on api_keys`.execute(db);
  await sql`drop function herald_announce_api_key_change()`.execute(db);
}
