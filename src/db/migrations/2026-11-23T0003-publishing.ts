import { sql, type Kysely } from 'kysely';

// Migrations import no application code (the schema as it was then), so they keep working as the code moves on.
type AnyDb = Kysely<unknown>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('accounts')
    .addColumn('mode', 'text', (c) =>
      c
        .notNull()
        .defaultTo('sandbox')
        .check(sql`mode in ('sandbox', 'live')`),
    )
    .addColumn('platform_user_id', 'text')
    // AES-256-GCM sealed JSON; never readable without the secret key.
    .addColumn('credentials', 'text')
    // Compare-and-set counter: refreshed tokens are stored only over the version they were refreshed from.
    .addColumn('credentials_version', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('health', 'text', (c) =>
      c
        .notNull()
        .defaultTo('ok')
        .check(sql`health in ('ok', 'needs_reconnect')`),
    )
    .addColumn('health_message', 'text')
    // Pacing: the earliest time this account may publish again (after a platform's 429, or the spacing after an outage).
    .addColumn('next_publish_at', 'timestamptz')
    .execute();
  await sql`alter table accounts add constraint accounts_live_has_credentials check (mode = 'sandbox' or credentials is not null or disconnected_at is not null)`.execute(
    db,
  );

  await sql`alter table posts drop constraint posts_status_check`.execute(db);
  await sql`alter table posts add constraint posts_status_check check (status in ('draft', 'scheduled', 'publishing', 'published', 'partial', 'failed'))`.execute(
    db,
  );
  // The queue job that will wake a worker for this post, so that editing or deleting the post changes it in the same transaction.
  await db.schema.alterTable('posts').addColumn('publish_job_id', 'text').addColumn('next_check_at', 'timestamptz').execute();
  await sql`update posts set next_check_at = scheduled_at where status = 'scheduled'`.execute(db);
  // Workers take the next post to look at by time through this index, so a backlog of thousands
  // costs each claim one index step, not a scan; settled posts (null) are not in it.
  await db.schema.createIndex('posts_next_check_at_idx').on('posts').column('next_check_at').where('next_check_at', 'is not', null).execute();
  await db.schema
    .createIndex('posts_user_id_status_created_at_id_idx')
    .on('posts')
    .expression(sql`user_id, status, created_at desc, id desc`)
    .execute();

  await db.schema
    .alterTable('post_targets')
    .addColumn('state', 'text', (c) =>
      c
        .notNull()
        .defaultTo('pending')
        .check(sql`state in ('pending', 'publishing', 'published', 'failed', 'unknown')`),
    )
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    // Attempts made before the last manual retry: automatic retries are bounded from there.
    .addColumn('attempts_before_retry', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('first_attempt_at', 'timestamptz')
    // A worker holds a publishing target until then; past it, the attempt is taken as interrupted.
    .addColumn('lease_until', 'timestamptz')
    // An earlier attempt may have reached the platform without its result being recorded.
    .addColumn('in_doubt', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('next_attempt_at', 'timestamptz')
    .addColumn('error_category', 'text')
    .addColumn('error_message', 'text')
    .addColumn('platform_post_id', 'text')
    .addColumn('url', 'text')
    .addColumn('published_at', 'timestamptz')
    .execute();

  // One row per published part (the post, each thread part, the first comment), with what makes its call repeatable.
  await db.schema
    .createTable('target_parts')
    .addColumn('post_id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('material_key', 'text', (c) => c.notNull())
    .addColumn('material_created_at', 'text', (c) => c.notNull())
    .addColumn('platform_post_id', 'text')
    .addColumn('url', 'text')
    .addColumn('cid', 'text')
    .addColumn('published_at', 'timestamptz')
    .addPrimaryKeyConstraint('target_parts_pkey', ['post_id', 'account_id', 'position'])
    .addForeignKeyConstraint('target_parts_target_fkey', ['post_id', 'account_id'], 'post_targets', ['post_id', 'account_id'], (c) => c.onDelete('cascade'))
    .execute();

  // The sandbox "platform": what a sandbox account published, keyed by the part's material key (one row per part,
  // however often it is published). It outlives the post, as a real platform's post would.
  await db.schema
    .createTable('sandbox_outbox')
    .addColumn('platform_post_id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('media_ids', 'jsonb', (c) => c.notNull())
    .addColumn('reply_to', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('sandbox_outbox').execute();
  await db.schema.dropTable('target_parts').execute();
  for (const column of [
    'state',
    'attempts',
    'attempts_before_retry',
    'first_attempt_at',
    'lease_until',
    'in_doubt',
    'next_attempt_at',
    'error_category',
    'error_message',
    'platform_post_id',
    'url',
    'published_at',
  ]) {
    await db.schema.alterTable('post_targets').dropColumn(column).execute();
  }
  await db.schema.dropIndex('posts_user_id_status_created_at_id_idx').execute();
  await db.schema.dropIndex('posts_next_check_at_idx').execute();
  await db.schema.alterTable('posts').dropColumn('publish_job_id').dropColumn('next_check_at').execute();
  await sql`alter table posts drop constraint posts_status_check`.execute(db);
  await sql`alter table posts add constraint posts_status_check check (status in ('draft', 'scheduled', 'published'))`.execute(db);
  await sql`alter table accounts drop constraint accounts_live_has_credentials`.execute(db);
  for (const column of ['mode', 'platform_user_id', 'credentials', 'credentials_version', 'health', 'health_message', 'next_publish_at']) {
    await db.schema.alterTable('accounts').dropColumn(column).execute();
  }
}
