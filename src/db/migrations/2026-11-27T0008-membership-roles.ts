import { sql, type Kysely } from 'kysely';

// Migrations import no application code (the schema as it was then), so they keep working as the code moves on.
type AnyDb = Kysely<unknown>;

/**
 * A member of an organization is an `owner` or a plain `member`. Only an owner may disconnect the
 * organization's accounts over the API, since that breaks every member's schedule. Existing
 * memberships become plain members: an operator names the owners (`herald org add-member --owner`).
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('memberships')
    .addColumn('role', 'text', (c) =>
      c
        .notNull()
        .defaultTo('member')
        .check(sql`role in ('owner', 'member')`),
    )
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.alterTable('memberships').dropColumn('role').execute();
}
