import { sql, type Expression, type Insertable, type Kysely, type RawBuilder, type Selectable, type Transaction } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import { compiledOnce } from '../compiled-query.js';
import type { Database, PostMediaTable, PostStatus, PostsTable, PostTargetsTable } from '../schema.js';

export type PostRow = Selectable<PostsTable>;

/** The columns the API shows of a post: what reads select, rather than every column. */
export const POST_VIEW_COLUMNS = ['id', 'user_id', 'caption', 'first_comment', 'post_type', 'status', 'scheduled_at', 'created_at', 'updated_at'] as const;
export type PostViewRow = Pick<PostRow, (typeof POST_VIEW_COLUMNS)[number]>;

/** A target as the domain states it: jsonb columns as plain values, null for none. */
export interface NewPostTarget extends Omit<Insertable<PostTargetsTable>, 'fields' | 'thread_parts'> {
  fields: Record<string, unknown> | null;
  thread_parts: string[] | null;
}

export interface NewPost {
  post: Insertable<PostsTable>;
  targets: NewPostTarget[];
  media: Insertable<PostMediaTable>[];
}

/**
 * A post, its targets and its media in one statement (the posts row in a CTE: the foreign keys
 * are checked at the statement's end), inside the caller's transaction. The targets and media go
 * as arrays, so every post, whatever its number of targets and media, runs the same statement,
 * built and prepared once.
 */
export async function insertPostWithTargets(trx: Transaction<Database>, { post, targets, media }: NewPost): Promise<void> {
  await postWithContents(
    trx,
    post.id,
    post.user_id,
    post.caption ?? null,
    post.first_comment ?? null,
    post.post_type,
    post.status,
    post.scheduled_at ?? null,
    post.next_check_at ?? null,
    targets.map((t) => t.account_id),
    targets.map((t) => t.position),
    targets.map((t) => t.caption_override ?? null),
    targets.map((t) => toJsonb(t.fields)),
    targets.map((t) => toJsonb(t.thread_parts)),
    media.map((m) => m.media_id),
    media.map((m) => m.position),
  );
}

/** Arrays unnested side by side in a select list: one row per element, in order. */
const unnested = <T>(values: unknown, type: 'text' | 'int') => sql<T>`unnest(${values}::${sql.raw(type)}[])`;

const postWithContents = compiledOnce(
  (
    db,
    id: string,
    userId: string,
    caption: string | null,
    firstComment: string | null,
    postType: string,
    status: PostStatus,
    scheduledAt: Date | null,
    nextCheckAt: Date | null,
    accountIds: string[],
    positions: number[],
    captionOverrides: (string | null)[],
    fields: (string | null)[],
    threadParts: (string | null)[],
    mediaIds: string[],
    mediaPositions: number[],
  ) =>
    db
      .with('inserted_post', (q) =>
        q
          .insertInto('posts')
          .values({
            id,
            user_id: userId,
            caption,
            first_comment: firstComment,
            post_type: postType,
            status,
            scheduled_at: scheduledAt,
            next_check_at: nextCheckAt,
          })
          .returning('id'),
      )
      .with('inserted_targets', (q) =>
        q
          .insertInto('post_targets')
          .columns(['post_id', 'account_id', 'position', 'caption_override', 'fields', 'thread_parts'])
          .expression(
            q.selectNoFrom([
              sql<string>`${id}`.as('post_id'),
              unnested<string>(accountIds, 'text').as('account_id'),
              unnested<number>(positions, 'int').as('position'),
              unnested<string | null>(captionOverrides, 'text').as('caption_override'),
              sql<string | null>`${unnested(fields, 'text')}::jsonb`.as('fields'),
              sql<string | null>`${unnested(threadParts, 'text')}::jsonb`.as('thread_parts'),
            ]),
          )
          .returning('post_id'),
      )
      .insertInto('post_media')
      .columns(['post_id', 'media_id', 'position'])
      .expression(
        db.selectNoFrom([
          sql<string>`${id}`.as('post_id'),
          unnested<string>(mediaIds, 'text').as('media_id'),
          unnested<number>(mediaPositions, 'int').as('position'),
        ]),
      ),
);

async function insertContents(trx: Transaction<Database>, { targets, media }: Omit<NewPost, 'post'>): Promise<void> {
  if (targets.length > 0) await trx.insertInto('post_targets').values(targets.map(targetValues)).execute();
  if (media.length > 0) await trx.insertInto('post_media').values(media).execute();
}

function targetValues(t: NewPostTarget): Insertable<PostTargetsTable> {
  return { ...t, fields: toJsonb(t.fields), thread_parts: toJsonb(t.thread_parts) };
}

/** Replaces a post's targets and media inside the caller's transaction (an edit of an unpublished post). */
export async function replacePostContents(trx: Transaction<Database>, postId: string, contents: Omit<NewPost, 'post'>): Promise<void> {
  await trx.deleteFrom('post_targets').where('post_id', '=', postId).execute();
  await trx.deleteFrom('post_media').where('post_id', '=', postId).execute();
  await insertContents(trx, contents);
}

/** What getPost shows of a target: no lease or attempt bookkeeping, whose dates would only be parsed to be dropped. */
const TARGET_VIEW_COLUMNS = [
  'post_targets.account_id',
  'post_targets.caption_override',
  'post_targets.fields',
  'post_targets.thread_parts',
  'post_targets.state',
  'post_targets.platform_post_id',
  'post_targets.url',
  'post_targets.published_at',
  'post_targets.error_category',
  'post_targets.error_message',
  'post_targets.next_attempt_at',
  'post_targets.attempts',
  'accounts.platform',
  'accounts.username',
] as const;

export type TargetWithAccount = Pick<
  Selectable<PostTargetsTable>,
  | 'account_id'
  | 'caption_override'
  | 'fields'
  | 'thread_parts'
  | 'state'
  | 'platform_post_id'
  | 'url'
  | 'published_at'
  | 'error_category'
  | 'error_message'
  | 'next_attempt_at'
  | 'attempts'
> & { platform: string; username: string };

/** A post's targets as JSON, in request order, with what the API shows of their accounts. */
const targetsOf = (db: Kysely<Database>, postId: Expression<string>) =>
  jsonArrayFrom(
    db
      .selectFrom('post_targets')
      .innerJoin('accounts', 'accounts.id', 'post_targets.account_id')
      .select(TARGET_VIEW_COLUMNS)
      .where('post_targets.post_id', '=', postId)
      .orderBy('post_targets.position'),
  );

/** A post's media ids in order, as an array. */
const mediaIdsOf = (db: Kysely<Database>, postId: Expression<string>) =>
  sql<string[]>`array(${db.selectFrom('post_media').select('media_id').where('post_id', '=', postId).orderBy('position')})`;

/** What a post holds besides its own row. */
export interface PostContents {
  targets: TargetWithAccount[];
  mediaIds: string[];
}

type PostContentsRow = { targets: ReturnType<typeof targetsOf> extends RawBuilder<infer T> ? T : never; media_ids: string[] };

/** The targets' times arrive as JSON text (ISO 8601, whatever the session's DateStyle). */
function toPostContents(row: PostContentsRow): PostContents {
  return {
    mediaIds: row.media_ids,
    targets: row.targets.map((t) => ({
      ...t,
      // JSON carries them as ISO 8601 text (`2026-11-26T09:04:15.186+00:00`), which Date reads.
      published_at: t.published_at === null ? null : new Date(t.published_at),
      next_attempt_at: t.next_attempt_at === null ? null : new Date(t.next_attempt_at),
    })),
  };
}

const contentsOfPost = compiledOnce((db, postId: string) =>
  db.selectNoFrom([targetsOf(db, sql`${postId}`).as('targets'), mediaIdsOf(db, sql`${postId}`).as('media_ids')]),
);

/** A post's targets and media ids, in one statement. */
export async function selectPostContents(db: Kysely<Database>, postId: string): Promise<PostContents> {
  const [row] = await contentsOfPost(db, postId);
  if (row === undefined) throw new Error('a select without from returned no row');
  return toPostContents(row);
}

/** These posts' targets and media ids, in one statement, by post id. */
export async function selectContentsOfPosts(db: Kysely<Database>, postIds: readonly string[]): Promise<Map<string, PostContents>> {
  if (postIds.length === 0) return new Map();
  const rows = await contentsOfPosts(db, [...postIds]);
  return new Map(rows.map(({ id, ...row }) => [id, toPostContents(row)]));
}

const contentsOfPosts = compiledOnce((db, postIds: string[]) =>
  db
    .selectFrom('posts')
    .select('id')
    .select([targetsOf(db, sql.ref('posts.id')).as('targets'), mediaIdsOf(db, sql.ref('posts.id')).as('media_ids')])
    .where((eb) => eb('id', '=', eb.fn.any(eb.val(postIds)))),
);

const postWithContentsOwnedBy = compiledOnce((db, id: string, userId: string) =>
  db
    .selectFrom('posts')
    .select(POST_VIEW_COLUMNS)
    .select([targetsOf(db, sql.ref('posts.id')).as('targets'), mediaIdsOf(db, sql.ref('posts.id')).as('media_ids')])
    .where('id', '=', id)
    .where('user_id', '=', userId),
);

/** The user's post with its targets and media ids, in one statement (getPost's one round trip). */
export async function selectPostWithContentsOwnedBy(
  db: Kysely<Database>,
  id: string,
  userId: string,
): Promise<{ post: PostViewRow; contents: PostContents } | undefined> {
  const [row] = await postWithContentsOwnedBy(db, id, userId);
  if (row === undefined) return undefined;
  const { targets, media_ids, ...post } = row;
  return { post, contents: toPostContents({ targets, media_ids }) };
}

const mediaIdsOfPost = compiledOnce((db, postId: string) => db.selectNoFrom(mediaIdsOf(db, sql`${postId}`).as('media_ids')));

export async function selectMediaIdsOfPost(db: Kysely<Database>, postId: string): Promise<string[]> {
  const [row] = await mediaIdsOfPost(db, postId);
  return row?.media_ids ?? [];
}

/** A value for a jsonb column: its JSON text, or SQL NULL for none. */
function toJsonb(value: object | null): string | null {
  return value === null ? null : JSON.stringify(value);
}

export interface PageOfPosts {
  limit: number;
  offset: number;
  status?: PostStatus;
  /** Only posts after this one in the order (older, or as old with a smaller id). */
  after?: { id: string; createdAtCeiling: Date };
}

/**
 * One page of the user's posts, newest first, id breaking ties (matches the user's indexes, with
 * or without status). After a post: its stored time and id bound the page, so the cost does not
 * grow with the depth; a post deleted since stands in with a time rounded up to the millisecond.
 */
export async function selectPostsPage(db: Kysely<Database>, userId: string, { limit, offset, status, after }: PageOfPosts): Promise<PostViewRow[]> {
  if (after === undefined) return status === undefined ? postsPage(db, userId, limit, offset) : postsPageInStatus(db, userId, limit, offset, status);
  return status === undefined
    ? postsPageAfter(db, userId, limit, offset, after.id, after.createdAtCeiling)
    : postsPageInStatusAfter(db, userId, limit, offset, after.id, after.createdAtCeiling, status);
}

/** One compiled statement for each shape of page: with or without a status, from the start or after a post. */
const postsPage = compiledOnce((db, userId: string, limit: number, offset: number) => pageOfPosts(db, userId, limit, offset));
const postsPageInStatus = compiledOnce((db, userId: string, limit: number, offset: number, status: PostStatus) =>
  pageOfPosts(db, userId, limit, offset, status),
);
const postsPageAfter = compiledOnce((db, userId: string, limit: number, offset: number, afterId: string, afterCeiling: Date) =>
  pageOfPosts(db, userId, limit, offset, undefined, { id: afterId, createdAtCeiling: afterCeiling }),
);
const postsPageInStatusAfter = compiledOnce((db, userId: string, limit: number, offset: number, afterId: string, afterCeiling: Date, status: PostStatus) =>
  pageOfPosts(db, userId, limit, offset, status, { id: afterId, createdAtCeiling: afterCeiling }),
);

function pageOfPosts(db: Kysely<Database>, userId: string, limit: number, offset: number, status?: PostStatus, after?: PageOfPosts['after']) {
  return db
    .selectFrom('posts')
    .select(POST_VIEW_COLUMNS)
    .where('user_id', '=', userId)
    .$if(status !== undefined, (q) => q.where('status', '=', status as PostStatus))
    .$if(after !== undefined, (q) =>
      q.where((eb) =>
        eb(
          eb.refTuple('created_at', 'id'),
          '<',
          eb.tuple(
            eb.fn.coalesce(
              eb
                .selectFrom('posts as cursor_post')
                .select('cursor_post.created_at')
                .where('cursor_post.id', '=', after?.id as string)
                .where('cursor_post.user_id', '=', userId),
              eb.val(after?.createdAtCeiling as Date),
            ),
            eb.val(after?.id as string),
          ),
        ),
      ),
    )
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset);
}

/** Locks the row until the transaction ends, so its status cannot change between a check and a write. */
export async function selectPostOwnedByForUpdate(db: Kysely<Database>, id: string, userId: string): Promise<PostRow | undefined> {
  return db.selectFrom('posts').selectAll().where('id', '=', id).where('user_id', '=', userId).forUpdate().executeTakeFirst();
}

export async function deletePostById(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('posts').where('id', '=', id).execute();
}

/**
 * Deletes the user's post if its status is one of these, in one statement; whether it did. A
 * concurrent change of the post's row (it waits for its lock) is seen before deciding.
 */
export async function deletePostInStatus(db: Kysely<Database>, id: string, userId: string, statuses: readonly PostStatus[]): Promise<boolean> {
  return (await postDeletedInStatus(db, id, userId, [...statuses])).length > 0;
}

const postDeletedInStatus = compiledOnce((db, id: string, userId: string, statuses: PostStatus[]) =>
  db
    .deleteFrom('posts')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where((eb) => eb('status', '=', eb.fn.any(eb.val(statuses))))
    .returning('id'),
);
