import { sql, type Kysely } from 'kysely';

// Migrations import no application code (the schema as it was then), so they keep working as the code moves on.
type AnyDb = Kysely<unknown>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('organizations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('memberships')
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('memberships_pkey', ['org_id', 'user_id'])
    .execute();
  await db.schema.createIndex('memberships_user_id_idx').on('memberships').column('user_id').execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('expires_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text')
    .addColumn('owner_user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('owner_org_id', 'text', (c) => c.references('organizations.id').onDelete('cascade'))
    .addColumn('disconnected_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('accounts_one_owner', sql`(owner_user_id is null) <> (owner_org_id is null)`)
    .execute();
  await db.schema.createIndex('accounts_owner_user_id_idx').on('accounts').column('owner_user_id').execute();
  await db.schema.createIndex('accounts_owner_org_id_idx').on('accounts').column('owner_org_id').execute();

  await db.schema
    .createTable('media_assets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('owner_user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('image', 'video')`))
    .addColumn('mime', 'text', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull().check(sql`bytes >= 0`))
    .addColumn('width', 'integer')
    .addColumn('height', 'integer')
    .addColumn('duration_ms', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('media_assets_owner_user_id_idx').on('media_assets').column('owner_user_id').execute();

  await db.schema
    .createTable('posts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('caption', 'text')
    .addColumn('first_comment', 'text')
    .addColumn('post_type', 'text', (c) => c.notNull().defaultTo('post'))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('draft', 'scheduled', 'published')`))
    .addColumn('scheduled_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('posts_scheduled_has_time', sql`status <> 'scheduled' or scheduled_at is not null`)
    .execute();
  // Serves "newest page of one user's posts" as an index range scan, whatever the table size.
  await db.schema
    .createIndex('posts_user_id_created_at_id_idx')
    .on('posts')
    .expression(sql`user_id, created_at desc, id desc`)
    .execute();

  await db.schema
    .createTable('post_targets')
    .addColumn('post_id', 'text', (c) => c.notNull().references('posts.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('caption_override', 'text')
    .addColumn('fields', 'jsonb')
    .addColumn('thread_parts', 'jsonb')
    .addPrimaryKeyConstraint('post_targets_pkey', ['post_id', 'account_id'])
    .execute();
  await db.schema.createIndex('post_targets_account_id_idx').on('post_targets').column('account_id').execute();

  await db.schema
    .createTable('post_media')
    .addColumn('post_id', 'text', (c) => c.notNull().references('posts.id').onDelete('cascade'))
    .addColumn('media_id', 'text', (c) => c.notNull().references('media_assets.id'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('post_media_pkey', ['post_id', 'media_id'])
    .execute();
  await db.schema.createIndex('post_media_media_id_idx').on('post_media').column('media_id').execute();
}

export async function down(db: AnyDb): Promise<void> {
  for (const table of ['post_media', 'post_targets', 'posts', 'media_assets', 'accounts', 'api_keys', 'memberships', 'organizations', 'users']) {
    await db.schema.dropTable(table).execute();
  }
}
