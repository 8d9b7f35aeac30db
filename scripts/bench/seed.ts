/**
 * The benchmark's data, written straight in SQL on a scratch database Herald's migrations made:
 * one user with many posts (3 targets and 2 media each), 1,000 other users with 5 accounts, 20
 * media and a few posts each. Ids are well formed (prefix + 26 characters of the id alphabet: an
 * md5's hex digits all belong to it), so Herald looks them up rather than refusing them unseen.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { hashApiKey } from '../../src/domain/api-keys.js';

export const OTHER_USERS = 1000;
const OTHER_USER_POSTS = 10;

/** What the load needs to know of the seeded data. */
export interface Seeded {
  /** The main user's API key, and its id. */
  key: string;
  userId: string;
  /** Its 5 accounts: 3 of its own, then 2 of an organization it belongs to. */
  accountIds: string[];
  mediaIds: string[];
  /** Posts of its to read one at a time. */
  postIds: string[];
}

export function seededId(prefix: string, seed: string): string {
  return `${prefix}_${createHash('md5').update(seed).digest('hex').slice(0, 26)}`;
}

/** The SQL twin of seededId, for ids made in bulk. */
const sqlId = (prefix: string, seedExpression: string) => `'${prefix}_' || substr(md5(${seedExpression}), 1, 26)`;

/**
 * Seeds `userKey` (the user the load runs as) with `posts` posts, and the other users; returns
 * what the load addresses. Posts are spread a second apart, newest now, in the status mix of an
 * account in use: mostly published, some scheduled, drafts and failures.
 */
export async function seed(client: pg.Client, userKey: string, posts: number, options = { contents: true }): Promise<Seeded> {
  const userId = seededId('usr', userKey);
  const orgId = seededId('org', userKey);
  const key = `hrld_bench_${userKey}_${'k'.repeat(32)}`;
  await client.query('begin');
  await client.query(`insert into users (id, name) values ($1, 'Bench user') on conflict do nothing`, [userId]);
  await client.query(`insert into api_keys (id, user_id, key_hash) values ($1, $2, $3) on conflict do nothing`, [
    seededId('key', userKey),
    userId,
    hashApiKey(key),
  ]);
  await client.query(`insert into organizations (id, name) values ($1, 'Bench org') on conflict do nothing`, [orgId]);
  await client.query(`insert into memberships (org_id, user_id) values ($1, $2) on conflict do nothing`, [orgId, userId]);
  const platforms = ['x', 'bluesky', 'linkedin', 'mastodon', 'threads'];
  const accountIds = platforms.map((p, i) => seededId('acc', `${userKey}/${i}`));
  for (const [i, id] of accountIds.entries()) {
    const owner = i < 3 ? { user: userId, org: null } : { user: null, org: orgId };
    await client.query(
      `insert into accounts (id, platform, username, display_name, owner_user_id, owner_org_id, created_at)
       values ($1, $2, $3, $4, $5, $6, now() - interval '1 year' + $7 * interval '1 minute') on conflict do nothing`,
      [id, platforms[i], `bench_${platforms[i]}`, `Bench on ${platforms[i]}`, owner.user, owner.org, i],
    );
  }
  const mediaIds = Array.from({ length: 20 }, (_, i) => seededId('med', `${userKey}/${i}`));
  await client.query(
    `insert into media_assets (id, owner_user_id, kind, mime, bytes, width, height, storage_key)
     select m.id, $1, 'image', 'image/jpeg', 180000 + m.n * 1000, 1600, 900, 'bench/' || m.id from unnest($2::text[]) with ordinality as m(id, n)
     on conflict do nothing`,
    [userId, mediaIds],
  );
  await insertPosts(client, userId, userKey, posts, options.contents ? { accountIds: accountIds.slice(0, 3), mediaIds: mediaIds.slice(0, 2) } : null);
  await client.query('commit');
  const { rows } = await client.query<{ id: string }>(`select id from posts where user_id = $1 order by created_at desc limit 1000`, [userId]);
  return { key, userId, accountIds, mediaIds, postIds: rows.map((r) => r.id) };
}

/** `count` posts of one user, each with its targets on `accountIds` and `mediaIds` attached (no contents: listing alone reads none). */
async function insertPosts(
  client: pg.Client,
  userId: string,
  tag: string,
  count: number,
  contents: { accountIds: string[]; mediaIds: string[] } | null,
): Promise<void> {
  await client.query(
    `insert into posts (id, user_id, caption, post_type, status, scheduled_at, created_at, updated_at)
     select ${sqlId('post', `$2 || '/' || g`)}, $1, 'Release notes ' || g || ': https://example.com/releases/' || g, 'post',
            s.status, case when s.status in ('draft') then null else now() - g * interval '1 second' + interval '1 hour' end,
            now() - g * interval '1 second', now() - g * interval '1 second'
     from generate_series(1, $3::int) g
     cross join lateral (select case when g % 10 < 7 then 'published' when g % 10 = 7 then 'draft' when g % 10 = 8 then 'failed' else 'published' end as status) s`,
    [userId, tag, count],
  );
  if (contents === null) return;
  await client.query(
    `insert into post_targets (post_id, account_id, position, caption_override, state, attempts, published_at, platform_post_id, url, error_category, error_message)
     select p.id, a.id, a.n - 1, case when a.n = 1 then 'Short version ' || p.id else null end,
            case p.status when 'published' then 'published' when 'failed' then 'failed' else 'pending' end,
            case when p.status in ('published', 'failed') then 1 else 0 end,
            case when p.status = 'published' then p.created_at + interval '1 hour' end,
            case when p.status = 'published' then 'sandbox-' || p.id || '-' || a.n end,
            case when p.status = 'published' then 'https://sandbox.example/' || p.id || '/' || a.n end,
            case when p.status = 'failed' then 'platform_error' end,
            case when p.status = 'failed' then 'The platform answered 500' end
     from posts p cross join unnest($2::text[]) with ordinality as a(id, n)
     where p.user_id = $1`,
    [userId, contents.accountIds],
  );
  await client.query(
    `insert into post_media (post_id, media_id, position)
     select p.id, m.id, m.n - 1 from posts p cross join unnest($2::text[]) with ordinality as m(id, n) where p.user_id = $1`,
    [userId, contents.mediaIds],
  );
}

/** The other users, each with a key, 5 accounts, 20 media and a few posts: the tables a real service carries. */
export async function seedOthers(client: pg.Client): Promise<void> {
  await client.query('begin');
  await client.query(`insert into users (id, name) select ${sqlId('usr', `'other/' || g`)}, 'Other ' || g from generate_series(1, $1::int) g`, [OTHER_USERS]);
  await client.query(
    `insert into api_keys (id, user_id, key_hash) select ${sqlId('key', `'other/' || g`)}, ${sqlId('usr', `'other/' || g`)}, md5('key/' || g) || md5('key2/' || g) from generate_series(1, $1::int) g`,
    [OTHER_USERS],
  );
  await client.query(
    `insert into accounts (id, platform, username, owner_user_id)
     select ${sqlId('acc', `'other/' || g || '/' || k`)}, (array['x', 'bluesky', 'linkedin', 'mastodon', 'threads'])[k], 'other' || g, ${sqlId('usr', `'other/' || g`)}
     from generate_series(1, $1::int) g, generate_series(1, 5) k`,
    [OTHER_USERS],
  );
  await client.query(
    `insert into media_assets (id, owner_user_id, kind, mime, bytes, width, height)
     select ${sqlId('med', `'other/' || g || '/' || k`)}, ${sqlId('usr', `'other/' || g`)}, 'image', 'image/png', 50000, 800, 600
     from generate_series(1, $1::int) g, generate_series(1, 20) k`,
    [OTHER_USERS],
  );
  await client.query(
    `insert into posts (id, user_id, caption, status, created_at, updated_at)
     select ${sqlId('post', `'other/' || g || '/' || k`)}, ${sqlId('usr', `'other/' || g`)}, 'Hello ' || k, 'draft', now() - k * interval '1 day', now()
     from generate_series(1, $1::int) g, generate_series(1, $2::int) k`,
    [OTHER_USERS, OTHER_USER_POSTS],
  );
  await client.query('commit');
}

/**
 * `count` drafts of the user, each with 3 targets and 2 media, for deletePost to remove; older
 * than every other post, so the newest pages are the same before and after.
 */
export async function seedDeletable(client: pg.Client, seeded: Seeded, tag: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, i) => seededId('post', `delete/${tag}/${i}`));
  await client.query('begin');
  await client.query(
    `insert into posts (id, user_id, caption, status, created_at, updated_at)
     select p.id, $1, 'To delete', 'draft', now() - interval '20 years', now() - interval '20 years' from unnest($2::text[]) p(id)`,
    [seeded.userId, ids],
  );
  await client.query(
    `insert into post_targets (post_id, account_id, position) select p.id, a.id, a.n - 1 from unnest($1::text[]) p(id) cross join unnest($2::text[]) with ordinality a(id, n)`,
    [ids, seeded.accountIds.slice(0, 3)],
  );
  await client.query(
    `insert into post_media (post_id, media_id, position) select p.id, m.id, m.n - 1 from unnest($1::text[]) p(id) cross join unnest($2::text[]) with ordinality m(id, n)`,
    [ids, seeded.mediaIds.slice(0, 2)],
  );
  await client.query('commit');
  return ids;
}
