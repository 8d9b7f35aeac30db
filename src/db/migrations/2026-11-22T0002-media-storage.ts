import { sql, type Kysely } from 'kysely';

type AnyDb = Kysely<unknown>;

/** Uploaded media keep their stored file's key and an alt text; listing is by owner, newest first. */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('media_assets').addColumn('storage_key', 'text').execute();
  await db.schema.alterTable('media_assets').addColumn('alt_text', 'text').execute();
  await db.schema
    .createIndex('media_assets_owner_created_at_id_idx')
    .on('media_assets')
    .expression(sql`owner_user_id, created_at desc, id desc`)
    .execute();
  // The composite index serves every lookup the single-column one did.
  await db.schema.dropIndex('media_assets_owner_user_id_idx').execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.createIndex('media_assets_owner_user_id_idx').on('media_assets').column('owner_user_id').execute();
  await db.schema.dropIndex('media_assets_owner_created_at_id_idx').execute();
  await db.schema.alterTable('media_assets').dropColumn('alt_text').execute();
  await db.schema.alterTable('media_assets').dropColumn('storage_key').execute();
}
