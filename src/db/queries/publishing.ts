import { sql, type ExpressionBuilder, type Insertable, type Kysely, type RawBuilder, type Selectable, type Updateable } from 'kysely';
import type { AccountRow } from './accounts.js';
import type { MediaRow } from './media.js';
import type { PostRow } from './posts.js';
import type { Database, PostStatus, PostTargetsTable, TargetPartsTable } from '../schema.js';

export type TargetRow = Selectable<PostTargetsTable>;
export type PartRow = Selectable<TargetPartsTable>;

/** Locks these posts until the transaction ends, in id order (so that two such locks cannot deadlock): every change to a post's targets goes through this lock. */
export async function selectPostsForUpdate(db: Kysely<Database>, ids: readonly string[]): Promise<PostRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('posts').selectAll().where('id', 'in', ids).orderBy('id').forUpdate().execute();
}

/** The posts a claim passes over, still due: those of these users, and those with an unsettled target on these accounts. */
export interface PassOver {
  userIds: readonly string[];
  accountIds: readonly string[];
}

const NOTHING_PASSED_OVER: PassOver = { userIds: [], accountIds: [] };

/** A due post, and whether it has media (which is read only then). */
export type DuePostRow = PostRow & { has_media: boolean };

/**
 * Locks up to `limit` posts a worker should look at now, soonest first, skipping posts other
 * workers hold, so that many workers share the work; a walk along posts_next_check_at_idx, whatever the backlog.
 */
export async function selectDuePostsForUpdate(db: Kysely<Database>, now: Date, limit: number, passOver: PassOver = NOTHING_PASSED_OVER): Promise<DuePostRow[]> {
  let query = db.selectFrom('posts');
  if (passOver.userIds.length > 0) query = query.where('posts.user_id', 'not in', passOver.userIds);
  if (passOver.accountIds.length > 0)
    query = query.where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('post_targets as busy')
            .select('busy.post_id')
            .whereRef('busy.post_id', '=', 'posts.id')
            .where('busy.account_id', 'in', passOver.accountIds)
            .where('busy.state', 'in', ['pending', 'failed', 'publishing']),
        ),
      ),
    );
  return query
    .selectAll()
    .select((eb) =>
      eb
        .exists(eb.selectFrom('post_media').select('post_media.post_id').whereRef('post_media.post_id', '=', 'posts.id'))
        .$castTo<boolean>()
        .as('has_media'),
    )
    .where('next_check_at', '<=', now)
    .orderBy('next_check_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
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
    .select((eb) =>
      eb.fn
        .min(
          eb
            .case()
            .when('t.state', '=', 'publishing')
            .then(eb.ref('t.lease_until'))
            // A held-back target waits for its account's pace and then its turn in the line (the post's next look).
            .else(eb.fn<Date>('greatest', ['a.next_publish_at', 'p.next_check_at']))
            .end(),
        )
        .as('at'),
    )
    .where('p.status', 'in', ['scheduled', 'publishing'])
    .where('p.scheduled_at', '<=', now)
    .where((eb) =>
      eb.or([
        eb('t.state', '=', 'publishing'),
        eb.and([eb('t.state', '=', 'pending'), eb.or([eb('a.next_publish_at', '>', now), eb('p.next_check_at', '>', now)])]),
      ]),
    )
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

/** The targets of these posts, each post's in order. */
export async function selectTargetsOfPosts(db: Kysely<Database>, postIds: readonly string[]): Promise<TargetRow[]> {
  if (postIds.length === 0) return [];
  return db.selectFrom('post_targets').selectAll().where('post_id', 'in', postIds).orderBy('post_id').orderBy('position').execute();
}

export async function selectAccountsByIds(db: Kysely<Database>, ids: readonly string[]): Promise<AccountRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('accounts').selectAll().where('id', 'in', ids).execute();
}

/**
 * Locks accounts (in id order, so that concurrent claims cannot deadlock) and reads their pacing
 * as last committed: two workers claiming posts of one account take turns on its next_publish_at.
 */
export async function lockAccountPacing(db: Kysely<Database>, ids: readonly string[]): Promise<AccountPacing[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('accounts').select(['id', 'next_publish_at', 'last_turn_at']).where('id', 'in', ids).orderBy('id').forUpdate().execute();
}

/** A live account's pacing: when it may next publish, and the end of its line of held-back posts. */
export type AccountPacing = Pick<AccountRow, 'id' | 'next_publish_at' | 'last_turn_at'>;

/** The media of these posts, each post's in order. */
export async function selectMediaOfPosts(db: Kysely<Database>, postIds: readonly string[]): Promise<(MediaRow & { post_id: string })[]> {
  if (postIds.length === 0) return [];
  return db
    .selectFrom('post_media')
    .innerJoin('media_assets', 'media_assets.id', 'post_media.media_id')
    .selectAll('media_assets')
    .select('post_media.post_id')
    .where('post_media.post_id', 'in', postIds)
    .orderBy('post_media.post_id')
    .orderBy('post_media.position')
    .execute();
}

/** The parts of these posts' targets, each target's in order. */
export async function selectPartsOfPosts(db: Kysely<Database>, postIds: readonly string[]): Promise<PartRow[]> {
  if (postIds.length === 0) return [];
  return db.selectFrom('target_parts').selectAll().where('post_id', 'in', postIds).orderBy('post_id').orderBy('account_id').orderBy('position').execute();
}

export async function insertPartsIfMissing(db: Kysely<Database>, parts: Insertable<TargetPartsTable>[]): Promise<void> {
  if (parts.length === 0) return;
  await db
    .insertInto('target_parts')
    .values(parts)
    .onConflict((oc) => oc.columns(['post_id', 'account_id', 'position']).doNothing())
    .execute();
}

/** The attempt that holds a target (the claim counted it in `attempts`). */
export interface AttemptKey {
  postId: string;
  accountId: string;
  attempt: number;
}

/** Whether the target is still publishing under this attempt: the condition every write of an attempt in flight carries. */
function heldBy(key: AttemptKey) {
  return (eb: ExpressionBuilder<Database, 'target_parts'>) =>
    eb.exists(
      eb
        .selectFrom('post_targets as held')
        .select('held.post_id')
        .where('held.post_id', '=', key.postId)
        .where('held.account_id', '=', key.accountId)
        .where('held.attempts', '=', key.attempt)
        .where('held.state', '=', 'publishing'),
    );
}

/** Writes a part of an attempt that still holds its target; false (nothing written) once another attempt holds it. */
export async function updatePart(db: Kysely<Database>, key: AttemptKey, position: number, values: Updateable<TargetPartsTable>): Promise<boolean> {
  const result = await db
    .updateTable('target_parts')
    .set(values)
    .where('post_id', '=', key.postId)
    .where('account_id', '=', key.accountId)
    .where('position', '=', position)
    .where(heldBy(key))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Moves the lease of a target its attempt still holds, calling the platform; false once another attempt holds it, or it is settled. */
export async function renewLease(db: Kysely<Database>, key: AttemptKey, leaseUntil: Date): Promise<boolean> {
  const result = await db
    .updateTable('post_targets')
    .set({ lease_until: leaseUntil })
    .where('post_id', '=', key.postId)
    .where('account_id', '=', key.accountId)
    .where('attempts', '=', key.attempt)
    .where('state', '=', 'publishing')
    .where('awaiting_platform', '=', false)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function updateTarget(db: Kysely<Database>, postId: string, accountId: string, values: Updateable<PostTargetsTable>): Promise<void> {
  await db.updateTable('post_targets').set(values).where('post_id', '=', postId).where('account_id', '=', accountId).execute();
}

/**
 * Rows written side by side in one statement: each column's values go as one array, unnested into
 * rows (`v`) that the statement joins on its keys; the statement is the same however many rows.
 */
type Column = readonly [name: string, type: 'text' | 'int' | 'boolean' | 'timestamptz', values: readonly unknown[]];

function unnested(columns: readonly Column[]): RawBuilder<unknown> {
  const arrays = columns.map(([, type, values]) => sql`${values}::${sql.raw(type)}[]`);
  return sql`unnest(${sql.join(arrays)}) as v(${sql.join(columns.map(([name]) => sql.ref(name)))})`;
}

/** `column = v.column` for each column set. */
function setFromRows(columns: readonly Column[]): RawBuilder<unknown> {
  return sql.join(columns.map(([name]) => sql`${sql.ref(name)} = ${sql.ref(`v.${name}`)}`));
}

/** The SQL type of each post_targets column the publishing road writes. */
const TARGET_COLUMN_TYPES = {
  state: 'text',
  attempts: 'int',
  first_attempt_at: 'timestamptz',
  lease_until: 'timestamptz',
  in_doubt: 'boolean',
  awaiting_platform: 'boolean',
  next_attempt_at: 'timestamptz',
  error_category: 'text',
  error_message: 'text',
  platform_post_id: 'text',
  url: 'text',
  published_at: 'timestamptz',
} as const;

export type TargetValues = { [K in keyof typeof TARGET_COLUMN_TYPES]?: Updateable<PostTargetsTable>[K] };

export interface TargetUpdate {
  postId: string;
  accountId: string;
  values: TargetValues;
  /** Only if the target is still publishing in this attempt (another worker may have taken it over since). */
  attempt?: number;
}

/**
 * Writes these targets' values, one statement for each set of columns written (and whether an
 * attempt is checked); the keys (`post_id|account_id`) of the targets it wrote.
 */
export async function updateTargets(db: Kysely<Database>, updates: readonly TargetUpdate[]): Promise<Set<string>> {
  const groups = new Map<string, TargetUpdate[]>();
  for (const update of updates) {
    const shape = `${update.attempt === undefined ? '' : 'attempt:'}${Object.keys(update.values).sort().join(',')}`;
    groups.set(shape, [...(groups.get(shape) ?? []), update]);
  }
  const written = new Set<string>();
  for (const group of groups.values()) {
    const names = Object.keys(group[0]?.values ?? {}).sort() as (keyof TargetValues)[];
    const checked = group[0]?.attempt !== undefined;
    const values: Column[] = names.map((name) => [name, TARGET_COLUMN_TYPES[name], group.map((u) => u.values[name] ?? null)]);
    const keys: Column[] = [
      ['post_id', 'text', group.map((u) => u.postId)],
      ['account_id', 'text', group.map((u) => u.accountId)],
      ...(checked ? [['attempt', 'int', group.map((u) => u.attempt)] as const] : []),
    ];
    const attemptCheck = checked ? sql`and t.state = 'publishing' and t.attempts = v.attempt` : sql``;
    const result = await sql<{ post_id: string; account_id: string }>`
      update post_targets as t set ${setFromRows(values)} from ${unnested([...keys, ...values])}
      where t.post_id = v.post_id and t.account_id = v.account_id ${attemptCheck}
      returning t.post_id, t.account_id`.execute(db);
    for (const row of result.rows) written.add(targetKey(row.post_id, row.account_id));
  }
  return written;
}

/** How updateTargets names a target. */
export function targetKey(postId: string, accountId: string): string {
  return `${postId}|${accountId}`;
}

/** Writes what was published of these parts, in one statement. */
export async function updatePartResults(
  db: Kysely<Database>,
  parts: readonly Pick<PartRow, 'post_id' | 'account_id' | 'position' | 'platform_post_id' | 'url' | 'cid' | 'published_at'>[],
): Promise<void> {
  if (parts.length === 0) return;
  const values: Column[] = [
    ['platform_post_id', 'text', parts.map((p) => p.platform_post_id)],
    ['url', 'text', parts.map((p) => p.url)],
    ['cid', 'text', parts.map((p) => p.cid)],
    ['published_at', 'timestamptz', parts.map((p) => p.published_at)],
  ];
  const keys: Column[] = [
    ['post_id', 'text', parts.map((p) => p.post_id)],
    ['account_id', 'text', parts.map((p) => p.account_id)],
    ['position', 'int', parts.map((p) => p.position)],
  ];
  await sql`
    update target_parts as p set ${setFromRows(values)} from ${unnested([...keys, ...values])}
    where p.post_id = v.post_id and p.account_id = v.account_id and p.position = v.position`.execute(db);
}

export interface PostUpdate {
  id: string;
  /** The new status and when it changed; absent: left as they are. */
  status?: { status: PostStatus; updatedAt: Date };
  /** The next look; absent: left as it is. */
  nextCheckAt?: Date | null;
}

/** Writes these posts' status and next look, in one statement. */
export async function updatePosts(db: Kysely<Database>, updates: readonly PostUpdate[]): Promise<void> {
  if (updates.length === 0) return;
  const rows = unnested([
    ['id', 'text', updates.map((u) => u.id)],
    ['status', 'text', updates.map((u) => u.status?.status ?? null)],
    ['updated_at', 'timestamptz', updates.map((u) => u.status?.updatedAt ?? null)],
    ['keep_check', 'boolean', updates.map((u) => u.nextCheckAt === undefined)],
    ['next_check_at', 'timestamptz', updates.map((u) => u.nextCheckAt ?? null)],
  ]);
  await sql`
    update posts as p set status = coalesce(v.status, p.status), updated_at = coalesce(v.updated_at, p.updated_at),
      next_check_at = case when v.keep_check then p.next_check_at else v.next_check_at end
    from ${rows} where p.id = v.id`.execute(db);
}

/** Writes these accounts' pacing, in id order (as lockAccountPacing locks them); a null leaves that column as it is. */
export async function updateAccountsPacing(db: Kysely<Database>, pacing: readonly AccountPacing[]): Promise<void> {
  if (pacing.length === 0) return;
  const sorted = [...pacing].sort((a, b) => (a.id < b.id ? -1 : 1));
  const rows = unnested([
    ['id', 'text', sorted.map((a) => a.id)],
    ['next_publish_at', 'timestamptz', sorted.map((a) => a.next_publish_at)],
    ['last_turn_at', 'timestamptz', sorted.map((a) => a.last_turn_at)],
  ]);
  await sql`
    update accounts as a set next_publish_at = coalesce(v.next_publish_at, a.next_publish_at), last_turn_at = coalesce(v.last_turn_at, a.last_turn_at)
    from ${rows} where a.id = v.id`.execute(db);
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

/** An account's stored credentials and who holds their refresh; undefined once it is disconnected. */
export async function selectCredentialsLease(
  db: Kysely<Database>,
  id: string,
): Promise<Pick<AccountRow, 'credentials' | 'credentials_version' | 'refresh_lease_until'> | undefined> {
  return db
    .selectFrom('accounts')
    .select(['credentials', 'credentials_version', 'refresh_lease_until'])
    .where('id', '=', id)
    .where('disconnected_at', 'is', null)
    .executeTakeFirst();
}

/**
 * Takes the refresh of an account's credentials until `until`, in one statement that commits on its
 * own, if nobody holds it (or its holder's lease has run out): the credentials then, or undefined
 * when another holds it or the account is disconnected.
 */
export async function takeRefreshLease(
  db: Kysely<Database>,
  id: string,
  leaseId: string,
  now: Date,
  until: Date,
): Promise<Pick<AccountRow, 'credentials' | 'credentials_version'> | undefined> {
  return db
    .updateTable('accounts')
    .set({ refresh_lease_id: leaseId, refresh_lease_until: until })
    .where('id', '=', id)
    .where('disconnected_at', 'is', null)
    .where((eb) => eb.or([eb('refresh_lease_until', 'is', null), eb('refresh_lease_until', '<=', now)]))
    .returning(['credentials', 'credentials_version'])
    .executeTakeFirst();
}

/** Gives the refresh back, if this lease still holds it. */
export async function releaseRefreshLease(db: Kysely<Database>, id: string, leaseId: string): Promise<void> {
  await db
    .updateTable('accounts')
    .set({ refresh_lease_id: null, refresh_lease_until: null })
    .where('id', '=', id)
    .where('refresh_lease_id', '=', leaseId)
    .execute();
}

/** Stores refreshed credentials only over the version they were refreshed from, under the lease they were refreshed in; false when newer ones are there or the lease was lost. */
export async function updateCredentialsIfVersion(
  db: Kysely<Database>,
  id: string,
  version: number,
  /** The refresh lease they were refreshed under: stored only while it still holds, and given back with them. */
  leaseId: string,
  sealed: string,
  /** When the new credentials end unless refreshed again; undefined leaves the stored end as it is. */
  endsAt?: Date,
): Promise<boolean> {
  const result = await db
    .updateTable('accounts')
    .set({
      credentials: sealed,
      credentials_version: version + 1,
      ...(endsAt === undefined ? {} : { credentials_end_at: endsAt }),
      refresh_lease_id: null,
      refresh_lease_until: null,
    })
    .where('id', '=', id)
    .where('credentials_version', '=', version)
    .where('refresh_lease_id', '=', leaseId)
    .where('disconnected_at', 'is', null)
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) return false;
  // Credentials that end later are no longer about to end.
  if (endsAt !== undefined)
    await db.updateTable('accounts').set({ health: 'ok', health_message: null }).where('id', '=', id).where('health', '=', 'expiring').execute();
  return true;
}
