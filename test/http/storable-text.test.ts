import { describe, expect, it } from 'vitest';
import type { Selectable } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import type { components } from '../../generated/openapi.js';
import type { PostCreateResult } from '../../src/domain/api-types.js';
import { useTestApi } from '../support/api.js';
import { unstorableTextDetail } from '../support/details.js';
import { account, media, userWithKey, type TestUser } from '../support/fixtures.js';

// Text that Postgres cannot store as sent (U+0000; an unpaired UTF-16 surrogate) is refused before
// anything is written, wherever it appears in a request; ids holding it are simply not the caller's.

const api = useTestApi();

type ErrorBody = components['schemas']['Error'];

/** Stands in for the character under test; replaced in the raw JSON text by its \u escape. */
const MARK = '@@MARK@@';

const UNSTORABLE = [
  { name: 'NUL', escape: '\\u0000', char: '\u0000', code: 'U+0000' },
  { name: 'a lone high surrogate', escape: '\\ud800', char: '\ud800', code: 'U+D800' },
  { name: 'a lone low surrogate', escape: '\\udc00', char: '\udc00', code: 'U+DC00' },
] as const;

/** A valid emoji is a surrogate pair in UTF-16: one code point, accepted like any other. */
const EMOJI = '\u{1F600}';

type PostRow = Selectable<Database['posts']>;
type TargetRow = Selectable<Database['post_targets']>;

interface Field {
  name: string;
  platform: string;
  /** The text under test; MARK stands for the character. */
  text: string;
  /** A valid body for the account, with `text` in the field. */
  body(acc: string, text: string): Record<string, unknown>;
  /** Where the field is, once MARK stands for `char`. */
  path(acc: string, char: string): (string | number)[];
  /** Where the text is stored; absent when the platform refuses the field even with an emoji. */
  stored?(post: PostRow, target: TargetRow): unknown;
}

const FIELDS: Field[] = [
  {
    name: 'caption',
    platform: 'bluesky',
    text: `Hi ${MARK}`,
    body: (acc, caption) => ({ accountIds: [acc], caption }),
    path: () => ['caption'],
    stored: (post) => post.caption,
  },
  {
    name: 'firstComment',
    platform: 'bluesky',
    text: `${MARK}!`,
    body: (acc, firstComment) => ({ accountIds: [acc], caption: 'Hi', firstComment }),
    path: () => ['firstComment'],
    stored: (post) => post.first_comment,
  },
  {
    name: 'accountOverrides[].captionOverride',
    platform: 'bluesky',
    text: `ab${MARK}`,
    body: (acc, captionOverride) => ({ accountIds: [acc], caption: 'Hi', accountOverrides: [{ accountId: acc, captionOverride }] }),
    path: () => ['accountOverrides', 0, 'captionOverride'],
    stored: (_post, target) => target.caption_override,
  },
  {
    name: 'a threadParts item',
    platform: 'bluesky',
    text: `two ${MARK}`,
    body: (acc, part) => ({ accountIds: [acc], postType: 'thread', threadParts: { [acc]: ['one', part] } }),
    path: (acc) => ['threadParts', acc, 1],
    stored: (_post, target) => target.thread_parts?.[1],
  },
  {
    name: 'a fields key',
    platform: 'reddit',
    text: `x${MARK}`,
    body: (acc, key) => ({ accountIds: [acc], caption: 'Hi', accountOverrides: [{ accountId: acc, fields: { subreddit: 'test', title: 'T', [key]: true } }] }),
    // A key is located at the key itself, which holds the character.
    path: (_acc, char) => ['accountOverrides', 0, 'fields', `x${char}`],
  },
  {
    name: 'a fields string value',
    platform: 'reddit',
    text: `Title ${MARK}`,
    body: (acc, title) => ({ accountIds: [acc], caption: 'Hi', accountOverrides: [{ accountId: acc, fields: { subreddit: 'test', title } }] }),
    path: () => ['accountOverrides', 0, 'fields', 'title'],
    stored: (_post, target) => target.fields?.title,
  },
  {
    name: 'a fields array item',
    platform: 'bluesky',
    text: MARK,
    body: (acc, lang) => ({ accountIds: [acc], caption: 'Hi', accountOverrides: [{ accountId: acc, fields: { langs: ['en', lang] } }] }),
    path: () => ['accountOverrides', 0, 'fields', 'langs', 1],
    stored: (_post, target) => (target.fields?.langs as string[] | undefined)?.[1],
  },
];

async function postCount(userId: string): Promise<number> {
  return (await api.db.selectFrom('posts').select('id').where('user_id', '=', userId).execute()).length;
}

/** The JSON text of the field's body, with MARK replaced in the raw text (so `\\ud800` stays an escape). */
function rawBody(field: Field, acc: string, replacement: string): string {
  return JSON.stringify(field.body(acc, field.text)).replaceAll(MARK, replacement);
}

function createPost(u: TestUser, payload: string) {
  return api.request<PostCreateResult | ErrorBody>({
    method: 'POST',
    url: '/api/v1/posts',
    key: u.key,
    payload,
    headers: { 'content-type': 'application/json' },
  });
}

describe('POST /api/v1/posts: text that cannot be stored is 400 at the field and writes nothing', () => {
  for (const field of FIELDS) {
    for (const bad of UNSTORABLE) {
      it(`refuses ${bad.name} in ${field.name}`, async () => {
        const u = await userWithKey(api.db);
        const acc = await account(api.db, u.userId, field.platform);
        const res = await createPost(u, rawBody(field, acc, bad.escape));
        expect(res.status).toBe(400);
        const detail = unstorableTextDetail(`${bad.code} at index ${field.text.indexOf(MARK)}`, field.path(acc, bad.char));
        expect(res.body).toEqual({ error: 'Invalid request', code: 'invalid_request', details: [detail] });
        expect(await postCount(u.userId)).toBe(0);
      });
    }

    it(`accepts an emoji (a surrogate pair) in ${field.name}, storing it as sent`, async () => {
      const u = await userWithKey(api.db);
      const acc = await account(api.db, u.userId, field.platform);
      const res = await createPost(u, rawBody(field, acc, '\\ud83d\\ude00'));
      const text = field.text.replace(MARK, EMOJI);
      if (field.stored === undefined) {
        // Storable text, so the platform judges the key: Reddit has no such field.
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          error: `Reddit allows fields subreddit, title, flairId, nsfw, spoiler or url; got "${text}" (account ${acc})`,
          code: 'platform_limit',
        });
        expect(await postCount(u.userId)).toBe(0);
        return;
      }
      expect(res.status).toBe(201);
      const { id } = res.body as PostCreateResult;
      const post = await api.db.selectFrom('posts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      const target = await api.db.selectFrom('post_targets').selectAll().where('post_id', '=', id).executeTakeFirstOrThrow();
      expect(field.stored(post, target)).toBe(text);
    });
  }
});

describe("POST /api/v1/posts: ids holding NUL are not the caller's", () => {
  it('answers 403 naming an account id with NUL, also when overrides and thread parts name it', async () => {
    const u = await userWithKey(api.db);
    const acc = await account(api.db, u.userId);
    const bad = 'acc_\u0000';
    const body = { accountIds: [acc, bad], caption: 'Hi', accountOverrides: [{ accountId: bad, captionOverride: 'x' }], threadParts: { [bad]: ['x'] } };
    const res = await api.request({ method: 'POST', url: '/api/v1/posts', key: u.key, body });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: `Account not accessible: ${bad}`, code: 'not_accessible' });
    expect(await postCount(u.userId)).toBe(0);
  });

  it('answers 403 naming a bare NUL account id', async () => {
    const u = await userWithKey(api.db);
    const res = await api.request({ method: 'POST', url: '/api/v1/posts', key: u.key, body: { accountIds: ['\u0000'] } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'Account not accessible: \u0000', code: 'not_accessible' });
    expect(await postCount(u.userId)).toBe(0);
  });

  it('answers 403 naming a media id with NUL or a lone surrogate', async () => {
    const u = await userWithKey(api.db);
    const acc = await account(api.db, u.userId);
    const image = await media(api.db, u.userId);
    for (const bad of ['med_\u0000', '\ud800']) {
      const res = await api.request({ method: 'POST', url: '/api/v1/posts', key: u.key, body: { accountIds: [acc], caption: 'Hi', mediaIds: [image, bad] } });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: `Media not accessible: ${bad}`, code: 'not_accessible' });
    }
    expect(await postCount(u.userId)).toBe(0);
  });
});
