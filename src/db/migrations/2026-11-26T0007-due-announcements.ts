import { sql, type Kysely } from 'kysely';

// Migrations import no application code (the schema as it was then), so they keep working as the code moves on.
type AnyDb = Kysely<unknown>;

/**
 * Work that comes due within a minute (a post to publish, a webhook delivery to attempt) is
 * announced on the `herald_due` channel as it commits, with its due time in milliseconds since
 * the epoch, so that idle workers wake for it instead of polling. Later work is found by the
 * workers' own look at the soonest due time, twice a minute; leaving it unannounced keeps the
 * commits of posts scheduled far ahead off Postgres's lock on the notification queue.
 */
export async function up(db: AnyDb): Promise<void> {
  await sql`
    create function herald_announce_due() returns trigger language plpgsql as $$
    begin
      perform pg_notify('herald_due', (extract(epoch from (to_jsonb(new) ->> tg_argv[0])::timestamptz) * 1000)::bigint::text);
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger posts_announce_due after insert or update of next_check_at on posts
    for each row when (new.next_check_at <= now() + interval '1 minute')
    execute function herald_announce_due('next_check_at')`.execute(db);
  await sql`
    create trigger webhook_deliveries_announce_due after insert or update of due_at on webhook_deliveries
    for each row when (new.due_at <= now() + interval '1 minute')
    execute function herald_announce_due('due_at')`.execute(db);
}

export async function down(db: AnyDb): Promise<void> {
  await sql`drop trigger webhook_deliveries_announce_due on webhook_deliveries`.execute(db);
  await sql`drop trigger posts_announce_due on posts`.execute(db);
  await sql`drop function herald_announce_due()`.execute(db);
}
