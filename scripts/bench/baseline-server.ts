/**
 * The benchmark's baseline: a deliberately minimal server answering Herald's five measured
 * operations on Herald's schema with Herald's contract (same paths, bodies and statuses), the
 * way one would write it by hand: Fastify without schemas, pg with named prepared statements,
 * hand-written checks. It does the work Herald does (the key looked up by its hash, ownership
 * checked, a create in one statement) and nothing else: no spec, no Ajv, no Kysely, no rate
 * limits, no logging. Run by scripts/bench.ts as `node --import tsx scripts/bench/baseline-server.ts`.
 */
import { createHash, randomBytes } from 'node:crypto';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = Fastify({ logger: false });

const POST_COLUMNS = 'id, user_id, caption, first_comment, post_type, status, scheduled_at, created_at, updated_at';
const Q = {
  auth: 'select id, user_id, expires_at, revoked_at from api_keys where key_hash = $1',
  listPosts: `select ${POST_COLUMNS} from posts where user_id = $1 order by created_at desc, id desc limit $2 offset $3`,
  // The post, its targets (as JSON, as Herald reads them) and its media ids in one statement.
  getPost: `select ${POST_COLUMNS},
              (select coalesce(json_agg(agg), '[]') from (
                 select t.account_id, t.caption_override, t.fields, t.thread_parts, t.state, t.platform_post_id, t.url, t.published_at,
                        t.error_category, t.error_message, t.next_attempt_at, t.attempts, a.platform, a.username
                 from post_targets t join accounts a on a.id = t.account_id where t.post_id = posts.id order by t.position) agg) as targets,
              array(select media_id from post_media where post_id = posts.id order by position) as media_ids
            from posts where id = $1 and user_id = $2`,
  accounts: `select * from (
               select id, platform, username, display_name, mode, health, health_message, created_at from accounts where owner_user_id = $1 and disconnected_at is null
               union all
               select a.id, a.platform, a.username, a.display_name, a.mode, a.health, a.health_message, a.created_at
               from memberships m join accounts a on a.owner_org_id = m.org_id where m.user_id = $1 and a.disconnected_at is null
             ) owned order by created_at, id`,
  /**
   * createPost in one statement: ownership of every account and medium (the media locked against a
   * concurrent delete, as a transaction would), the caption limits of each account's platform ($11
   * the length of each account's caption, $12 the limits by platform) and the insert of the post,
   * its targets and its media links, which happens only when every check holds. It answers with the
   * checks, and the post when it was made.
   */
  createPost: `with acc as (select id, platform from accounts where id = any($8::text[]) and disconnected_at is null
                              and (owner_user_id = $2 or owner_org_id in (select org_id from memberships where user_id = $2))),
               med as (select id from media_assets where owner_user_id = $2 and id = any($10::text[]) for key share),
               chk as (select not exists (select from unnest($8::text[]) r(id) where not exists (select from acc where acc.id = r.id)) as accounts_ok,
                              (select count(*) from med) = (select count(distinct id) from unnest($10::text[]) m(id)) as media_ok,
                              cardinality($10::text[]) <= 4
                                and not exists (select from unnest($8::text[], $11::int[]) r(id, len) join acc using (id)
                                                where r.len > coalesce(($12::jsonb ->> acc.platform)::int, 500)) as within_limits),
               ok as (select from chk where accounts_ok and media_ok and within_limits),
               p as (insert into posts (id, user_id, caption, first_comment, post_type, status, scheduled_at)
                     select $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::timestamptz from ok returning id, status),
               t as (insert into post_targets (post_id, account_id, position, caption_override)
                     select $1, a.id, a.n - 1, a.caption from ok, unnest($8::text[], $9::text[]) with ordinality a(id, caption, n)),
               m as (insert into post_media (post_id, media_id, position) select $1, m.id, m.n - 1 from ok, unnest($10::text[]) with ordinality m(id, n))
               select chk.accounts_ok, chk.media_ok, chk.within_limits, p.id, p.status from chk left join p on true`,
  deletePost: `delete from posts where id = $1 and user_id = $2 and status in ('draft', 'scheduled') returning id`,
  postStatus: 'select status from posts where id = $1 and user_id = $2',
};

type PostRow = {
  id: string;
  user_id: string;
  caption: string | null;
  first_comment: string | null;
  post_type: string;
  status: string;
  scheduled_at: Date | null;
  created_at: Date;
  updated_at: Date;
};
type Rows = {
  auth: { id: string; user_id: string; expires_at: Date | null; revoked_at: Date | null };
  listPosts: PostRow;
  getPost: PostRow & {
    targets: {
      account_id: string;
      platform: string;
      username: string;
      caption_override: string | null;
      fields: unknown;
      thread_parts: unknown;
      state: string;
      platform_post_id: string | null;
      url: string | null;
      published_at: string | null;
      error_category: string | null;
      error_message: string | null;
      next_attempt_at: string | null;
      attempts: number;
    }[];
    media_ids: string[];
  };
  accounts: { id: string; platform: string; username: string; display_name: string | null; mode: string; health: string; health_message: string | null };
  createPost: { accounts_ok: boolean; media_ok: boolean; within_limits: boolean; id: string | null; status: string | null };
  deletePost: { id: string };
  postStatus: { status: string };
};

/** Runs a statement by name, so each connection parses and plans it once. */
function query<N extends keyof typeof Q>(client: pg.Pool, name: N, values: unknown[]): Promise<pg.QueryResult<Rows[N]>> {
  return client.query<Rows[N]>({ name, text: Q[name], values });
}

const CAPTION_LIMITS: Record<string, number> = { x: 280, bluesky: 300, linkedin: 3000, mastodon: 500, threads: 500 };
const CAPTION_LIMITS_JSON = JSON.stringify(CAPTION_LIMITS);
const ID = /^[a-z]+_[0-9abcdefghjkmnpqrstvwxyz]{26}$/;

async function caller(req: FastifyRequest, reply: FastifyReply): Promise<string | undefined> {
  const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
  if (token === undefined) return void reply.code(401).send({ error: 'Missing API key' });
  const hash = createHash('sha256').update(token).digest('hex');
  const { rows } = await query(pool, 'auth', [hash]);
  const key = rows[0];
  if (!key || key.revoked_at !== null || (key.expires_at !== null && key.expires_at <= new Date()))
    return void reply.code(401).send({ error: 'Invalid API key' });
  return key.user_id;
}

function postView(r: PostRow) {
  return {
    id: r.id,
    userId: r.user_id,
    caption: r.caption,
    firstComment: r.first_comment,
    postType: r.post_type,
    status: r.status,
    scheduledAt: r.status === 'draft' ? null : (r.scheduled_at?.toISOString() ?? null),
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

app.get('/api/v1/posts', async (req, reply) => {
  const userId = await caller(req, reply);
  if (userId === undefined) return reply;
  const q = req.query as Record<string, string | undefined>;
  const limit = q.limit === undefined ? 25 : Number(q.limit);
  const offset = q.offset === undefined ? 0 : Number(q.offset);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100 || !Number.isInteger(offset) || offset < 0)
    return reply.code(400).send({ error: 'Invalid request' });
  // One row more than the page says whether there is a next page.
  const { rows } = await query(pool, 'listPosts', [userId, limit + 1, offset]);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const nextCursor = rows.length > limit && last ? Buffer.from(`p1.${last.id}.${last.created_at.getTime()}`).toString('base64url') : null;
  return { data: page.map(postView), limit, offset, nextCursor };
});

app.get('/api/v1/posts/:id', async (req, reply) => {
  const userId = await caller(req, reply);
  if (userId === undefined) return reply;
  const { id } = req.params as { id: string };
  const post = ID.test(id) ? (await query(pool, 'getPost', [id, userId])).rows[0] : undefined;
  if (!post) return reply.code(404).send({ error: 'Post not found' });
  const iso = (time: string | null) => (time === null ? null : new Date(time).toISOString());
  return {
    ...postView(post),
    mediaIds: post.media_ids,
    targets: post.targets.map((t) => {
      const withError = (t.state === 'failed' || t.state === 'unknown') && t.error_category !== null;
      return {
        accountId: t.account_id,
        platform: t.platform,
        username: t.username,
        caption: t.caption_override ?? post.caption,
        fields: t.fields,
        threadParts: t.thread_parts,
        status: t.state,
        platformPostId: t.platform_post_id,
        url: t.url,
        publishedAt: iso(t.published_at),
        error: withError
          ? {
              message: t.error_message ?? '',
              category: t.error_category,
              retrying: t.state === 'failed' && t.next_attempt_at !== null,
              attempts: t.attempts,
              nextAttemptAt: t.state === 'failed' ? iso(t.next_attempt_at) : null,
            }
          : null,
      };
    }),
  };
});

app.get('/api/v1/accounts', async (req, reply) => {
  const userId = await caller(req, reply);
  if (userId === undefined) return reply;
  const { rows } = await query(pool, 'accounts', [userId]);
  return {
    data: rows.map((a) => ({
      id: a.id,
      platform: a.platform,
      username: a.username,
      displayName: a.display_name,
      mode: a.mode,
      health: a.health,
      healthMessage: a.health_message,
    })),
  };
});

interface CreateBody {
  accountIds: string[];
  caption?: string;
  mediaIds?: string[];
  accountOverrides?: { accountId: string; captionOverride?: string }[];
}

function isCreateBody(b: unknown): b is CreateBody {
  const body = b as CreateBody;
  const strings = (v: unknown) => Array.isArray(v) && v.every((s) => typeof s === 'string');
  return (
    typeof b === 'object' &&
    b !== null &&
    strings(body.accountIds) &&
    body.accountIds.length > 0 &&
    (body.caption === undefined || typeof body.caption === 'string') &&
    (body.mediaIds === undefined || strings(body.mediaIds)) &&
    (body.accountOverrides === undefined || (Array.isArray(body.accountOverrides) && body.accountOverrides.every((o) => typeof o?.accountId === 'string')))
  );
}

app.post('/api/v1/posts', async (req, reply) => {
  const userId = await caller(req, reply);
  if (userId === undefined) return reply;
  const body = req.body;
  if (!isCreateBody(body)) return reply.code(400).send({ error: 'Invalid request' });
  const mediaIds = body.mediaIds ?? [];
  const overrides = new Map((body.accountOverrides ?? []).map((o) => [o.accountId, o.captionOverride ?? null]));
  const id = `post_${randomBytes(13).toString('hex').slice(0, 26)}`;
  const captions = body.accountIds.map((a) => overrides.get(a) ?? null);
  const lengths = body.accountIds.map((a) => (overrides.get(a) ?? body.caption ?? '').length);
  const values = [id, userId, body.caption ?? null, null, 'post', 'draft', null, body.accountIds, captions, mediaIds, lengths, CAPTION_LIMITS_JSON];
  const made = (await query(pool, 'createPost', values)).rows[0];
  if (made?.id != null) return reply.code(201).send({ id: made.id, status: made.status });
  const refusal = !made?.accounts_ok
    ? { status: 403, error: 'Account not accessible' }
    : !made.media_ok
      ? { status: 403, error: 'Media not accessible' }
      : { status: 400, error: 'Caption or media over the platform limit' };
  return reply.code(refusal.status).send({ error: refusal.error });
});

app.delete('/api/v1/posts/:id', async (req, reply) => {
  const userId = await caller(req, reply);
  if (userId === undefined) return reply;
  const { id } = req.params as { id: string };
  if (!ID.test(id)) return reply.code(404).send({ error: 'Post not found' });
  const deleted = await query(pool, 'deletePost', [id, userId]);
  if (deleted.rowCount === 0) {
    const post = (await query(pool, 'postStatus', [id, userId])).rows[0];
    return post ? reply.code(409).send({ error: 'Cannot delete published post' }) : reply.code(404).send({ error: 'Post not found' });
  }
  return { success: true };
});

const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
console.log(`baseline listening at ${address}`);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => void app.close().then(() => pool.end()));
}
