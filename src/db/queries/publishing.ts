import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { AccountRow } from './accounts.js';
import type { MediaRow } from './media.js';
import type { PostRow } from './posts.js';
import type { Database, PostTargetsTable, TargetPartsTable } from '../schema.js';

export type TargetRow = Selectable<PostTargetsTable>;
export type PartRow = Selectable<TargetPartsTable>;

/** Locks the post until the transaction ends: every change to a post's targets goes through this lock. */
export async function selectPostForUpdate(db: Kysely<Database>, id: string): Promise<PostRow | undefined> {
  return db.selectFrom('posts').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/**
 * Locks the next post a worker should look at now, skipping posts other workers hold, so that
 * many workers share the work; one step of posts_next_check_at_idx, whatever the backlog.
 */
export async function selectNextDuePostForUpdate(db: Kysely<Database>, now: Date): Promise<PostRow | undefined> {
  return db.selectFrom('posts').selectAll().where('next_check_at', '<=', now).orderBy('next_check_at').limit(1).forUpdate().skipLocked().executeTakeFirst();
}

/**
 * The soonest time work on a due post may become possible: a lease another worker holds running
 * out, or an account's pacing ending. Null when nothing due is waiting.
 */
export async function selectNextDueWait(db: Kysely<Database>, now: Date): Promise<Date | null> {
  const row = await db
    .selectFrom('post_targets as t')
    .innerJoin('posts as p', 'p.id', 't.post_id')
    .innerJoin('accounts as a', 'a.id', 't.account_id')
    .select((eb) => eb.fn.min(eb.case().when('t.state', '=', 'publishing').then(eb.ref('t.lease_until')).else(eb.ref('a.next_publish_at')).end()).as('at'))
    .where('p.status', 'in', ['scheduled', 'publishing'])
    .where('p.scheduled_at', '<=', now)
    .where((eb) => eb.or([eb('t.state', '=', 'publishing'), eb.and([eb('t.state', '=', 'pending'), eb('a.next_publish_at', '>', now)])]))
    .executeTakeFirst();
  return row?.at ?? null;
}

/** The channel on which work coming due within a minute is announced as it commits, with its due time in ms since the epoch (migration 0007). */
export const DUE_CHANNEL = 'herald_due';

/** The soonest time after `after` a post is to be looked at (one step of posts_next_check_at_idx); null when none is. */
export async function selectSoonestPostCheckAfter(db: Kysely<Database>, after: Date): Promise<Date | null> {
  const row = await db
    .selectFrom('posts')
    .select((eb) => eb.fn.min('next_check_at').as('at'))
    .where('next_check_at', '>', after)
    .executeTakeFirst();
  return row?.at ?? null;
}

export async function selectTargetsOfPost(db: Kysely<Database>, postId: string): Promise<TargetRow[]> {
  return db.selectFrom('post_targets').selectAll().where('post_id', '=', postId).orderBy('position').execute();
}

export async function selectAccountsByIds(db: Kysely<Database>, ids: readonly string[]): Promise<AccountRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('accounts').selectAll().where('id', 'in', ids).execute();
}

/**
 * Locks accounts (in id order, so that concurrent claims cannot deadlock) and reads their pacing
 * as last committed: two workers claiming posts of one account take turns on its next_publish_at.
 */
export async function lockAccountPacing(db: Kysely<Database>, ids: readonly string[]): Promise<Map<string, Date | null>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('accounts').select(['id', 'next_publish_at']).where('id', 'in', ids).orderBy('id').forUpdate().execute();
  return new Map(rows.map((r) => [r.id, r.next_publish_at]));
}

export async function selectMediaOfPost(db: Kysely<Database>, postId: string): Promise<MediaRow[]> {
  return db
    .selectFrom('post_media')
    .innerJoin('media_assets', 'media_assets.id', 'post_media.media_id')
    .selectAll('media_assets')
    .where('post_media.post_id', '=', postId)
    .orderBy('post_media.position')
    .execute();
}

export async function selectPartsOfTarget(db: Kysely<Database>, postId: string, accountId: string): Promise<PartRow[]> {
  return db.selectFrom('target_parts').selectAll().where('post_id', '=', postId).where('account_id', '=', accountId).orderBy('position').execute();
}

export async function insertPartsIfMissing(db: Kysely<Database>, parts: Insertable<TargetPartsTable>[]): Promise<void> {
  if (parts.length === 0) return;
  await db
    .insertInto('target_parts')
    .values(parts)
    .onConflict((oc) => oc.columns(['post_id', 'account_id', 'position']).doNothing())
    .execute();
}

export async function updatePart(
  db: Kysely<Database>,
  key: { postId: string; accountId: string; position: number },
  values: Updateable<TargetPartsTable>,
): Promise<void> {
  await db
    .updateTable('target_parts')
    .set(values)
    .where('post_id', '=', key.postId)
    .where('account_id', '=', key.accountId)
    .where('position', '=', key.position)
    .execute();
}

export async function updateTarget(db: Kysely<Database>, postId: string, accountId: string, values: Updateable<PostTargetsTable>): Promise<void> {
  await db.updateTable('post_targets').set(values).where('post_id', '=', postId).where('account_id', '=', accountId).execute();
}

/** Updates a target only if it is still in the attempt the caller made; false when another worker took it over. */
export async function updateTargetOfAttempt(
  db: Kysely<Database>,
  postId: string,
  accountId: string,
  attempt: number,
  values: Updateable<PostTargetsTable>,
): Promise<boolean> {
  const result = await db
    .updateTable('post_targets')
    .set(values)
    .where('post_id', '=', postId)
    .where('account_id', '=', accountId)
    .where('state', '=', 'publishing')
    .where('attempts', '=', attempt)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function updatePost(db: Kysely<Database>, id: string, values: Updateable<Database['posts']>): Promise<void> {
  await db.updateTable('posts').set(values).where('id', '=', id).execute();
}

export async function updateAccount(db: Kysely<Database>, id: string, values: Updateable<Database['accounts']>): Promise<void> {
  await db.updateTable('accounts').set(values).where('id', '=', id).execute();
}

/** Marks an account as needing reconnection; the account when this changed its health, undefined when it already needed it. */
export async function markNeedsReconnect(db: Kysely<Database>, id: string, message: string): Promise<AccountRow | undefined> {
  return db
    .updateTable('accounts')
    .set({ health: 'needs_reconnect', health_message: message })
    .where('id', '=', id)
    .where('health', 'in', ['ok', 'expiring'])
    .returningAll()
    .executeTakeFirst();
}

/** Locks a connected account's credentials until the transaction ends: one refresh of them at a time. */
export async function selectCredentialsForUpdate(
  db: Kysely<Database>,
  id: string,
): Promise<Pick<AccountRow, 'credentials' | 'credentials_version'> | undefined> {
  return db
    .selectFrom('accounts')
    .select(['credentials', 'credentials_version'])
    .where('id', '=', id)
    .where('disconnected_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
}

/** Stores refreshed credentials only over the version they were refreshed from; false when newer ones are there. */
export async function updateCredentialsIfVersion(
  db: Kysely<Database>,
  id: string,
  version: number,
  sealed: string,
  /** When the new credentials end unless refreshed again; undefined leaves the stored end as it is. */
  endsAt?: Date,
): Promise<boolean> {
  const result = await db
    .updateTable('accounts')
    .set({ credentials: sealed, credentials_version: version + 1, ...(endsAt === undefined ? {} : { credentials_end_at: endsAt }) })
    .where('id', '=', id)
    .where('credentials_version', '=', version)
    .where('disconnected_at', 'is', null)
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) return false;
  // Credentials that end later are no longer about to end.
  if (endsAt !== undefined)
    await db.updateTable('accounts').set({ health: 'ok', health_message: null }).where('id', '=', id).where('health', '=', 'expiring').execute();
  return true;
}
