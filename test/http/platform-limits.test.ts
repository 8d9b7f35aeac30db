import { describe, expect, it } from 'vitest';
import type { components } from '../../generated/openapi.js';
import { isObject, loadSpec, type JsonObject } from '../../scripts/spec-document.js';
import { platformRules } from '../../src/domain/platforms/index.js';
import { useTestApi, type ApiResponse, type Schemas } from '../support/api.js';
import { account, media, postCount, userWithKey } from '../support/fixtures.js';
import { stringMatching } from '../support/matchers.js';

const api = useTestApi();

const JPEG = { kind: 'image', mime: 'image/jpeg', bytes: 400_000, width: 1080, height: 1080, durationMs: null } as const;
const MP4 = { kind: 'video', mime: 'video/mp4', bytes: 5_000_000, width: 1080, height: 1920, durationMs: 20_000 } as const;

/** What these tests read of a refusal; an accepted post is checked by its status alone. */
async function create(key: string, body: object): Promise<ApiResponse<Schemas['Error']>> {
  return api.request({ method: 'POST', url: '/api/v1/posts', key, body });
}

describe('GET /api/v1/platforms', () => {
  it('publishes the same table the checks read, to callers with a key', async () => {
    const u = await userWithKey(api.db);
    const res = await api.request<Schemas['PlatformList']>({ method: 'GET', url: '/api/v1/platforms', key: u.key });
    expect(res.status).toBe(200);
    expect(res.body.data.map((p) => p.id)).toEqual([
      'x',
      'instagram',
      'facebook',
      'linkedin',
      'threads',
      'bluesky',
      'tiktok',
      'youtube',
      'pinterest',
      'mastodon',
      'reddit',
    ]);
    // No app is configured here: X and the rest connect through their consent pages, but not on this server.
    const connects: Record<string, [string, boolean]> = {
      x: ['oauth', false],
      linkedin: ['oauth', false],
      instagram: ['oauth', false],
      facebook: ['oauth', false],
      threads: ['oauth', false],
      pinterest: ['oauth', false],
      youtube: ['oauth', false],
      tiktok: ['oauth', false],
      reddit: ['oauth', false],
      bluesky: ['credentials', true],
      mastodon: ['credentials', true],
    };
    // Mastodon's instances each have a consent page: it connects that way too.
    const connectWith: Record<string, string[]> = { mastodon: ['credentials', 'oauth'] };
    const expected = platformRules.map((rules) => {
      const connect = connects[rules.id]?.[0] ?? 'sandbox';
      return { ...rules, connect, connectWith: connectWith[rules.id] ?? [connect], configured: connects[rules.id]?.[1] ?? false };
    });
    expect(res.body).toEqual({ data: JSON.parse(JSON.stringify(expected)) as unknown });
    expect((await api.request({ method: 'GET', url: '/api/v1/platforms' })).status).toBe(401);
  });

  // The spec's XFields … RedditFields are the source of the served fields; this states the
  // correspondence independently of the generator, so neither view can drift unnoticed.
  it("serves for each platform exactly the keys, types, descriptions and limits of the spec's <Platform>Fields schema", async () => {
    const u = await userWithKey(api.db);
    const res = await api.request<components['schemas']['PlatformList']>({ method: 'GET', url: '/api/v1/platforms', key: u.key });
    expect(res.status).toBe(200);
    const schemas = specSchemas();
    const perPlatform = Object.keys(schemas).filter((name) => /^[A-Z][a-z]*Fields$/.test(name) && name !== 'PlatformFields');
    const schemaName = (id: string): string => `${id.charAt(0).toUpperCase()}${id.slice(1)}Fields`;
    expect(res.body.data.map((platform) => schemaName(platform.id)).sort()).toEqual(perPlatform.sort());
    for (const platform of res.body.data) {
      const schema = schemas[schemaName(platform.id)] as JsonObject;
      const required = (schema.required ?? []) as string[];
      const expected = Object.entries(schema.properties as Record<string, JsonObject>).map(([key, property]) => ({
        key,
        description: property.description,
        type: property.type,
        required: required.includes(key),
        enum: property.enum ?? null,
        minLength: property.minLength ?? null,
        maxLength: property.maxLength ?? null,
        pattern: property.pattern ?? null,
        patternDescription: property['x-patternDescription'] ?? null,
        format: property.format ?? null,
        minimum: property.minimum ?? null,
        maximum: property.maximum ?? null,
        items: isObject(property.items)
          ? { type: property.items.type, minLength: property.items.minLength ?? null, maxLength: property.items.maxLength ?? null }
          : null,
        maxItems: property.maxItems ?? null,
        maxTotalLength: property['x-maxTotalLength'] ?? null,
        excludesMedia: property['x-excludesMedia'] === true,
      }));
      expect(platform.fields, platform.id).toEqual(expected);
    }
  });
});

function specSchemas(): JsonObject {
  const components = loadSpec().components as JsonObject;
  return components.schemas as JsonObject;
}

describe('POST /api/v1/posts against platform limits: 400 naming the limit, no details, nothing written', () => {
  it('refuses each kind of violation with a message naming the platform, the limit and the value', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x');
    const ig = await account(api.db, u.userId, 'instagram');
    const yt = await account(api.db, u.userId, 'youtube');
    const reddit = await account(api.db, u.userId, 'reddit');
    const pin = await account(api.db, u.userId, 'pinterest');
    const li = await account(api.db, u.userId, 'linkedin');
    const square = await media(api.db, u.userId, JPEG);
    const clip = await media(api.db, u.userId, MP4);
    const huge = await media(api.db, u.userId, { ...JPEG, bytes: 6_000_000 });
    const tall = await media(api.db, u.userId, { ...JPEG, width: 1000, height: 2000 });
    const png = await media(api.db, u.userId, { ...JPEG, mime: 'image/png' });
    const long = await media(api.db, u.userId, { ...MP4, durationMs: 150_000 });
    const eleven = [];
    for (let i = 0; i < 11; i++) eleven.push(await media(api.db, u.userId, JPEG));

    const cases: [string, object, string][] = [
      ['caption length', { accountIds: [x], caption: 'a'.repeat(281) }, `X caption allows at most 280 characters; got 281 (account ${x})`],
      ['post type', { accountIds: [x], caption: 'hi', postType: 'story' }, `X allows post types post or thread; got story (account ${x})`],
      ['media count', { accountIds: [ig], postType: 'carousel', mediaIds: eleven }, `Instagram carousel allows between 2 and 10 files; got 11 (account ${ig})`],
      ['media required', { accountIds: [ig], caption: 'no picture' }, `Instagram post allows between 1 and 10 files; got 0 (account ${ig})`],
      ['mixing', { accountIds: [x], caption: 'hi', mediaIds: [square, clip] }, `X allows images or videos, not both; got 1 image and 1 video (account ${x})`],
      ['file size', { accountIds: [x], caption: 'hi', mediaIds: [huge] }, `X image allows at most 5 MB; got 6 MB (media ${huge}, account ${x})`],
      [
        'aspect ratio',
        { accountIds: [ig], mediaIds: [tall] },
        `Instagram post image allows an aspect ratio (width/height) between 0.8 and 1.91; got 0.5 from 1000x2000 (media ${tall}, account ${ig})`,
      ],
      ['mime type', { accountIds: [ig], mediaIds: [png] }, `Instagram post image allows image/jpeg; got image/png (media ${png}, account ${ig})`],
      [
        'duration',
        { accountIds: [x], caption: 'hi', mediaIds: [long] },
        stringMatching(new RegExp(`^X video allows .*140.*; got 150.*\\(media ${long}, account ${x}\\)$`)),
      ],
      [
        'thread parts off thread',
        { accountIds: [x], caption: 'hi', threadParts: { [x]: ['a', 'b'] } },
        `X post allows no thread parts (they need post type thread); got 2 (account ${x})`,
      ],
      [
        'single-style thread',
        { accountIds: [li], postType: 'thread', threadParts: { [li]: ['a', 'b'] } },
        `LinkedIn thread allows exactly 1 part carrying the full text; got 2 (account ${li})`,
      ],
      [
        'first comment',
        { accountIds: [pin], mediaIds: [square], firstComment: 'c', accountOverrides: [{ accountId: pin, fields: { boardId: '123' } }] },
        `Pinterest allows no first comment; got 1 character (account ${pin})`,
      ],
      [
        'unknown field',
        { accountIds: [yt], postType: 'short', mediaIds: [clip], accountOverrides: [{ accountId: yt, fields: { foo: 1 } }] },
        `YouTube allows fields title, privacyStatus, tags or selfDeclaredMadeForKids; got "foo" (account ${yt})`,
      ],
      [
        'field type',
        { accountIds: [yt], postType: 'short', mediaIds: [clip], accountOverrides: [{ accountId: yt, fields: { title: 5 } }] },
        `YouTube field "title" must be a string; got 5 (account ${yt})`,
      ],
      ['required field', { accountIds: [reddit], caption: 'hi' }, `Reddit requires field "subreddit"; got none (account ${reddit})`],
      [
        'field pattern',
        { accountIds: [reddit], caption: 'hi', accountOverrides: [{ accountId: reddit, fields: { subreddit: 'r/typescript', title: 'A title' } }] },
        `Reddit field "subreddit" must be a subreddit name without r/ (letters, digits, _); got "r/typescript" (account ${reddit})`,
      ],
      [
        'field that makes a post without media',
        {
          accountIds: [reddit],
          caption: 'hi',
          mediaIds: [square],
          accountOverrides: [{ accountId: reddit, fields: { subreddit: 'typescript', title: 'A title', url: 'https://example.com/a' } }],
        },
        `Reddit field "url" makes a post without media; got 1 file (account ${reddit})`,
      ],
      [
        'field total length',
        {
          accountIds: [yt],
          postType: 'short',
          mediaIds: [clip],
          accountOverrides: [{ accountId: yt, fields: { tags: ['a'.repeat(300), `b ${'c'.repeat(197)}`] } }],
        },
        `YouTube field "tags" allows at most 500 characters in total; got 501 (account ${yt})`,
      ],
    ];
    for (const [name, body, message] of cases) {
      const res = await create(u.key, body);
      expect(res.status, name).toBe(400);
      expect(res.body, name).toEqual({ error: message, code: 'platform_limit' });
    }
    expect(await postCount(api.db, u.userId)).toBe(0);
  });

  it('checks each target with its own caption: a short override fixes a long default for X', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x');
    const li = await account(api.db, u.userId, 'linkedin');
    const longText = 'word '.repeat(100).trim();
    const refused = await create(u.key, { accountIds: [li, x], caption: longText });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe(`X caption allows at most 280 characters; got 499 (account ${x})`);
    const fixed = await create(u.key, { accountIds: [li, x], caption: longText, accountOverrides: [{ accountId: x, captionOverride: 'Short for X' }] });
    expect(fixed.status).toBe(201);
  });

  it('counts the way each platform counts: URLs are 23 on X, emoji are one grapheme on Bluesky', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x');
    const bsky = await account(api.db, u.userId, 'bluesky');
    const url = `https://example.com/${'a'.repeat(300)}`;
    expect((await create(u.key, { accountIds: [x], caption: `${'b'.repeat(256)} ${url}` })).status).toBe(201);
    expect((await create(u.key, { accountIds: [x], caption: `${'b'.repeat(257)} ${url}` })).status).toBe(400);
    // Two code points, four UTF-16 units, eight UTF-8 bytes: one grapheme (and 300 of them stay under 3,000 bytes).
    const thumbs = '👍🏽';
    expect((await create(u.key, { accountIds: [bsky], caption: thumbs.repeat(300) })).status).toBe(201);
    const over = await create(u.key, { accountIds: [bsky], caption: thumbs.repeat(301) });
    expect(over.status).toBe(400);
    expect(over.body.error).toMatch(/^Bluesky caption allows at most 300/);
  });

  it('reports the first violation in the order of the targets', async () => {
    const u = await userWithKey(api.db);
    const x = await account(api.db, u.userId, 'x');
    const reddit = await account(api.db, u.userId, 'reddit');
    const res = await create(u.key, { accountIds: [reddit, x], caption: 'a'.repeat(400) });
    expect(res.body.error).toMatch(/^Reddit /);
    const swapped = await create(u.key, { accountIds: [x, reddit], caption: 'a'.repeat(400) });
    expect(swapped.body.error).toMatch(/^X caption/);
  });

  it("never reveals anything about someone else's account or media: their ids fail ownership with 403", async () => {
    const ada = await userWithKey(api.db);
    const bob = await userWithKey(api.db);
    const adaX = await account(api.db, ada.userId, 'x');
    const bobsX = await account(api.db, bob.userId, 'x');
    const bobsHugeImage = await media(api.db, bob.userId, { ...JPEG, bytes: 50_000_000 });
    const foreignAccount = await create(ada.key, { accountIds: [bobsX], caption: 'a'.repeat(400) });
    expect(foreignAccount).toMatchObject({ status: 403, body: { error: `Account not accessible: ${bobsX}` } });
    const foreignMedia = await create(ada.key, { accountIds: [adaX], caption: 'hi', mediaIds: [bobsHugeImage] });
    expect(foreignMedia).toMatchObject({ status: 403, body: { error: `Media not accessible: ${bobsHugeImage}` } });
  });
});
