import { Ajv } from 'ajv';
import { describe, expect, it, vi } from 'vitest';
import { findPlatformViolation } from '../../../src/domain/platforms/index.js';
import type { PostType } from '../../../src/domain/platforms/index.js';
import { images, target } from './helpers.js';

const POST_TYPE: Record<string, PostType> = { youtube: 'post', tiktok: 'post' };

function check(platform: string, fields: Record<string, unknown> | null): string | null {
  return findPlatformViolation([target(platform, POST_TYPE[platform] ?? 'post', { fields })]);
}

// Every key of every platform with a valid value.
const VALID: Record<string, Record<string, unknown>> = {
  x: { replySettings: 'following', communityId: '1234567890', madeWithAi: false, paidPartnership: true },
  instagram: { collaborators: ['alice', 'bob', 'carol'], locationId: '110843418940484', shareToFeed: true, thumbOffsetMs: 0 },
  facebook: { link: 'https://example.com/article' },
  linkedin: { visibility: 'CONNECTIONS' },
  threads: { replyControl: 'followers_only', topicTag: 'Cooking', linkAttachment: 'http://example.com' },
  bluesky: { langs: ['en', 'de', 'pt-BR'] },
  tiktok: { privacyLevel: 'SELF_ONLY', disableComments: true, disableDuet: false, disableStitch: false },
  youtube: { title: 'My video', privacyStatus: 'unlisted', tags: ['cats', 'funny cats'], selfDeclaredMadeForKids: false },
  pinterest: { boardId: '549755885175', title: 'My pin', link: 'https://example.com/recipe' },
  mastodon: { visibility: 'unlisted', sensitive: true, language: 'en' },
  reddit: { subreddit: 'typescript', title: 'A title', flairId: 'abc-123', nsfw: false, spoiler: false, url: 'https://example.com/a' },
};

const ALLOWED: Record<string, string> = {
  x: 'X allows fields replySettings, communityId, madeWithAi or paidPartnership',
  instagram: 'Instagram allows fields collaborators, locationId, shareToFeed or thumbOffsetMs',
  facebook: 'Facebook allows fields link',
  linkedin: 'LinkedIn allows fields visibility',
  threads: 'Threads allows fields replyControl, topicTag or linkAttachment',
  bluesky: 'Bluesky allows fields langs',
  tiktok: 'TikTok allows fields privacyLevel, disableComments, disableDuet or disableStitch',
  youtube: 'YouTube allows fields title, privacyStatus, tags or selfDeclaredMadeForKids',
  pinterest: 'Pinterest allows fields boardId, title or link',
  mastodon: 'Mastodon allows fields visibility, sensitive or language',
  reddit: 'Reddit allows fields subreddit, title, flairId, nsfw, spoiler or url',
};

describe('known fields', () => {
  it.each(Object.entries(VALID))('%s accepts all its fields', (platform, fields) => {
    expect(check(platform, fields)).toBeNull();
  });

  it.each(Object.keys(VALID).filter((platform) => platform !== 'reddit'))('%s accepts no fields', (platform) => {
    expect(check(platform, null)).toBeNull();
    expect(check(platform, {})).toBeNull();
  });
});

describe('compiled schemas', () => {
  it('are compiled once and reused, never per check', () => {
    expect(check('x', {})).toBeNull();
    const compile = vi.spyOn(Ajv.prototype, 'compile');
    try {
      for (const [platform, fields] of Object.entries(VALID)) {
        expect(check(platform, fields)).toBeNull();
        expect(check(platform, { ...fields, unknownKey: 1 })).not.toBeNull();
      }
      expect(compile).not.toHaveBeenCalled();
    } finally {
      compile.mockRestore();
    }
  });
});

describe('unknown keys', () => {
  it.each(Object.entries(ALLOWED))('%s refuses an unknown key', (platform, allowed) => {
    expect(check(platform, { ...VALID[platform], unknownKey: 1 })).toBe(`${allowed}; got "unknownKey" (account acc_1)`);
  });

  it('refuses snake_case spellings of known keys', () => {
    expect(check('youtube', { privacy_status: 'public' })).toBe(
      'YouTube allows fields title, privacyStatus, tags or selfDeclaredMadeForKids; got "privacy_status" (account acc_1)',
    );
  });

  it('refuses a key that only exists on another platform', () => {
    expect(check('x', { boardId: '1' })).toBe('X allows fields replySettings, communityId, madeWithAi or paidPartnership; got "boardId" (account acc_1)');
  });
});

describe('value types', () => {
  // [platform, key, wrong value, expected rule and actual]
  it.each([
    ['x', 'replySettings', 1, 'must be a string; got 1'],
    ['x', 'madeWithAi', 'yes', 'must be true or false; got "yes"'],
    ['instagram', 'collaborators', 'alice', 'must be an array of strings; got "alice"'],
    ['instagram', 'collaborators', ['alice', 2], 'must be an array of strings; got an array'],
    ['instagram', 'thumbOffsetMs', 1.5, 'must be an integer; got 1.5'],
    ['instagram', 'thumbOffsetMs', '100', 'must be an integer; got "100"'],
    ['instagram', 'shareToFeed', null, 'must be true or false; got null'],
    ['facebook', 'link', { url: 'https://x.com' }, 'must be a string; got an object'],
    ['linkedin', 'visibility', ['PUBLIC'], 'must be a string; got an array'],
    ['threads', 'topicTag', true, 'must be a string; got true'],
    ['bluesky', 'langs', 'en', 'must be an array of strings; got "en"'],
    ['tiktok', 'privacyLevel', null, 'must be a string; got null'],
    ['tiktok', 'disableComments', 0, 'must be true or false; got 0'],
    ['youtube', 'title', 5, 'must be a string; got 5'],
    ['youtube', 'tags', 'cats,dogs', 'must be an array of strings; got "cats,dogs"'],
    ['youtube', 'selfDeclaredMadeForKids', 'false', 'must be true or false; got "false"'],
    ['pinterest', 'boardId', 549755885175, 'must be a string; got 549755885175'],
    ['mastodon', 'sensitive', 'true', 'must be true or false; got "true"'],
    ['reddit', 'subreddit', 42, 'must be a string; got 42'],
    ['reddit', 'nsfw', 1, 'must be true or false; got 1'],
  ])('%s %s = %j', (platform, key, value, problem) => {
    expect(check(platform, { ...VALID[platform], [key]: value })).toBe(`${displayName(platform)} field "${key}" ${problem} (account acc_1)`);
  });
});

describe('value rules at their limits', () => {
  // [platform, key, accepted value, refused value, expected rule and actual]
  it.each([
    ['x', 'replySettings', 'verified', 'everyone', 'allows "following", "mentionedUsers", "subscribers" or "verified"; got "everyone"'],
    ['x', 'communityId', '1', '12a', 'must be a numeric id; got "12a"'],
    ['instagram', 'collaborators', ['a', 'b', 'c'], ['a', 'b', 'c', 'd'], 'allows at most 3 items; got 4'],
    ['instagram', 'collaborators', ['a'], ['a', ''], 'item 2 allows at least 1 character; got 0'],
    ['instagram', 'thumbOffsetMs', 0, -1, 'allows at least 0; got -1'],
    ['instagram', 'locationId', '42', 'Paris', 'must be a numeric id; got "Paris"'],
    ['facebook', 'link', `https://example.com/${'a'.repeat(2028)}`, `https://example.com/${'a'.repeat(2029)}`, 'allows at most 2048 characters; got 2049'],
    ['facebook', 'link', 'http://example.com', 'example.com', 'must be an http or https URL; got "example.com"'],
    ['facebook', 'link', 'https://example.com', 'javascript:alert(1)', 'must be an http or https URL; got "javascript:alert(1)"'],
    ['linkedin', 'visibility', 'LOGGED_IN', 'public', 'allows "PUBLIC", "CONNECTIONS" or "LOGGED_IN"; got "public"'],
    [
      'threads',
      'replyControl',
      'mentioned_only',
      'nobody',
      'allows "everyone", "accounts_you_follow", "mentioned_only", "parent_post_author_only" or "followers_only"; got "nobody"',
    ],
    ['threads', 'topicTag', 'a'.repeat(50), 'a'.repeat(51), 'allows at most 50 characters; got 51'],
    ['threads', 'topicTag', 'a', '', 'allows at least 1 character; got 0'],
    ['threads', 'topicTag', 'Food and drink', 'Food & drink', 'must not contain . or &; got "Food & drink"'],
    ['threads', 'topicTag', 'Cooking', 'cooking.tips', 'must not contain . or &; got "cooking.tips"'],
    ['threads', 'linkAttachment', 'https://example.com', 'ftp://example.com', 'must be an http or https URL; got "ftp://example.com"'],
    ['bluesky', 'langs', ['en', 'de', 'fr'], ['en', 'de', 'fr', 'es'], 'allows at most 3 items; got 4'],
    [
      'tiktok',
      'privacyLevel',
      'PUBLIC_TO_EVERYONE',
      'PUBLIC',
      'allows "PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR" or "SELF_ONLY"; got "PUBLIC"',
    ],
    ['youtube', 'title', 'a'.repeat(100), 'a'.repeat(101), 'allows at most 100 characters; got 101'],
    ['youtube', 'title', 'a', '', 'allows at least 1 character; got 0'],
    ['youtube', 'title', 'Cats ≥ dogs', 'Cats > dogs', 'must not contain < or >; got "Cats > dogs"'],
    ['youtube', 'privacyStatus', 'private', 'Private', 'allows "public", "unlisted" or "private"; got "Private"'],
    ['youtube', 'tags', ['a'.repeat(500)], ['a'.repeat(501)], 'allows at most 500 characters in total; got 501'],
    [
      'youtube',
      'tags',
      ['a'.repeat(248), `b ${'c'.repeat(248)}`],
      ['a'.repeat(249), `b ${'c'.repeat(248)}`],
      'allows at most 500 characters in total; got 501',
    ],
    ['youtube', 'tags', ['cats'], ['cats', ''], 'item 2 allows at least 1 character; got 0'],
    ['pinterest', 'boardId', '549755885175', 'my-board', 'must be a numeric id; got "my-board"'],
    ['pinterest', 'title', 'a'.repeat(100), 'a'.repeat(101), 'allows at most 100 characters; got 101'],
    ['pinterest', 'link', `https://example.com/${'a'.repeat(2028)}`, `https://example.com/${'a'.repeat(2029)}`, 'allows at most 2048 characters; got 2049'],
    ['pinterest', 'link', 'https://example.com', 'not a url', 'must be an http or https URL; got "not a url"'],
    ['mastodon', 'visibility', 'direct', 'followers', 'allows "public", "unlisted", "private" or "direct"; got "followers"'],
    ['mastodon', 'language', 'pt', 'pt-BR', 'must be a two-letter ISO 639-1 code; got "pt-BR"'],
    ['reddit', 'subreddit', 'a'.repeat(21), 'a'.repeat(22), 'allows at most 21 characters; got 22'],
    ['reddit', 'subreddit', 'ab_12', 'r/typescript', 'must be a subreddit name without r/ (letters, digits, _); got "r/typescript"'],
    ['reddit', 'subreddit', 'a', '', 'allows at least 1 character; got 0'],
    ['reddit', 'title', 'a'.repeat(300), 'a'.repeat(301), 'allows at most 300 characters; got 301'],
    ['reddit', 'title', 'a', '', 'allows at least 1 character; got 0'],
    ['reddit', 'flairId', 'x', '', 'allows at least 1 character; got 0'],
  ])('%s %s', (platform, key, accepted, refused, problem) => {
    expect(check(platform, { ...VALID[platform], [key]: accepted })).toBeNull();
    expect(check(platform, { ...VALID[platform], [key]: refused })).toBe(`${displayName(platform)} field "${key}" ${problem} (account acc_1)`);
  });

  it('counts lengths in UTF-16 code units, as GET /api/v1/platforms says: an emoji outside the BMP is 2', () => {
    expect(check('youtube', { title: '😀'.repeat(50) })).toBeNull();
    expect(check('youtube', { title: '😀'.repeat(51) })).toBe('YouTube field "title" allows at most 100 characters; got 102 (account acc_1)');
    expect(check('instagram', { collaborators: ['😀'] })).toBeNull();
  });

  it('counts a tag containing a space 2 more towards the total, items that are not strings being a type error', () => {
    expect(check('youtube', { tags: ['a b', 'c'.repeat(495)] })).toBeNull();
    expect(check('youtube', { tags: ['a b', 'c'.repeat(496)] })).toBe('YouTube field "tags" allows at most 500 characters in total; got 501 (account acc_1)');
    expect(check('youtube', { tags: ['c'.repeat(501), 7] })).toBe('YouTube field "tags" must be an array of strings; got an array (account acc_1)');
  });

  it('shortens long values in messages', () => {
    expect(check('linkedin', { visibility: 'x'.repeat(100) })).toBe(
      `LinkedIn field "visibility" allows "PUBLIC", "CONNECTIONS" or "LOGGED_IN"; got "${'x'.repeat(37)}…" (account acc_1)`,
    );
  });
});

describe('several problems at once: the same one is always reported', () => {
  it('reports the first field in the spec order, whatever the order of the request', () => {
    const message = 'YouTube field "title" must be a string; got 5 (account acc_1)';
    expect(check('youtube', { tags: 'cats', title: 5 })).toBe(message);
    expect(check('youtube', { title: 5, tags: 'cats' })).toBe(message);
  });

  it('reports the first unknown key of the request before any value problem', () => {
    expect(check('x', { madeWithAi: 'yes', second: 1, first: 2 })).toBe(
      'X allows fields replySettings, communityId, madeWithAi or paidPartnership; got "second" (account acc_1)',
    );
  });

  it('within a field: type, then allowed values, then lengths, then pattern, then format', () => {
    expect(check('linkedin', { visibility: 7 })).toBe('LinkedIn field "visibility" must be a string; got 7 (account acc_1)');
    expect(check('youtube', { title: `<${'a'.repeat(100)}` })).toBe('YouTube field "title" allows at most 100 characters; got 101 (account acc_1)');
    expect(check('youtube', { title: '' })).toBe('YouTube field "title" allows at least 1 character; got 0 (account acc_1)');
    expect(check('facebook', { link: `ftp://${'a'.repeat(2048)}` })).toBe('Facebook field "link" allows at most 2048 characters; got 2054 (account acc_1)');
  });

  it('within an array: its type, then the number of items, then each item in order, then the total length', () => {
    expect(check('instagram', { collaborators: ['', 'b', 'c', 'd'] })).toBe('Instagram field "collaborators" allows at most 3 items; got 4 (account acc_1)');
    expect(check('youtube', { tags: ['ok', '', 'c'.repeat(600)] })).toBe('YouTube field "tags" item 2 allows at least 1 character; got 0 (account acc_1)');
  });
});

describe('Reddit required fields', () => {
  it.each([
    [null, 'Reddit requires field "subreddit"; got none (account acc_1)'],
    [{}, 'Reddit requires field "subreddit"; got none (account acc_1)'],
    [{ title: 'A title' }, 'Reddit requires field "subreddit"; got none (account acc_1)'],
    [{ subreddit: 'typescript' }, 'Reddit requires field "title"; got none (account acc_1)'],
    [{ subreddit: 'typescript', title: 'A title' }, null],
  ])('%j', (fields, expected) => {
    expect(findPlatformViolation([target('reddit', 'post', { fields })])).toBe(expected);
    expect(findPlatformViolation([target('reddit', 'carousel', { fields })])).toBe(expected);
  });

  it('refuses media beside url (a link post), and takes a link post without media', () => {
    const fields = { subreddit: 'typescript', title: 'A title', url: 'https://example.com/a' };
    expect(findPlatformViolation([target('reddit', 'post', { fields })])).toBeNull();
    expect(findPlatformViolation([target('reddit', 'carousel', { fields, media: images(2) })])).toBe(
      'Reddit field "url" makes a post without media; got 2 files (account acc_1)',
    );
  });

  it('reports an unknown key before a missing required one', () => {
    expect(findPlatformViolation([target('reddit', 'post', { fields: { sub: 'x' } })])).toBe(
      'Reddit allows fields subreddit, title, flairId, nsfw, spoiler or url; got "sub" (account acc_1)',
    );
  });
});

function displayName(platform: string): string {
  return (ALLOWED[platform] ?? '').split(' allows')[0] ?? '';
}
