import { describe, expect, it } from 'vitest';
import { findPlatformViolation } from '../../../src/domain/platforms/index.js';
import type { PostType } from '../../../src/domain/platforms/index.js';
import { target } from './helpers.js';

function check(platform: string, postType: PostType, caption: string | null): string | null {
  return findPlatformViolation([target(platform, postType, { caption })]);
}

// [platform, post type, limit, unit word, message subject]; ASCII text, so every unit counts 1 per letter.
const LIMITS: Array<[string, PostType, number, string, string]> = [
  ['x', 'post', 280, 'characters', 'X caption'],
  ['x', 'thread', 280, 'characters', 'X caption'],
  ['instagram', 'post', 2200, 'characters', 'Instagram post caption'],
  ['instagram', 'carousel', 2200, 'characters', 'Instagram carousel caption'],
  ['instagram', 'reel', 2200, 'characters', 'Instagram reel caption'],
  ['facebook', 'post', 5000, 'characters', 'Facebook post caption'],
  ['facebook', 'reel', 5000, 'characters', 'Facebook reel caption'],
  ['facebook', 'thread', 5000, 'characters', 'Facebook thread caption'],
  ['linkedin', 'post', 3000, 'characters', 'LinkedIn caption'],
  ['linkedin', 'thread', 3000, 'characters', 'LinkedIn caption'],
  ['threads', 'post', 500, 'characters', 'Threads caption'],
  ['threads', 'carousel', 500, 'characters', 'Threads caption'],
  ['threads', 'thread', 500, 'characters', 'Threads caption'],
  ['bluesky', 'post', 300, 'characters', 'Bluesky caption'],
  ['bluesky', 'thread', 300, 'characters', 'Bluesky caption'],
  ['tiktok', 'post', 2200, 'characters', 'TikTok post caption'],
  ['tiktok', 'carousel', 4000, 'characters', 'TikTok carousel caption'],
  ['youtube', 'post', 5000, 'bytes', 'YouTube caption'],
  ['youtube', 'short', 5000, 'bytes', 'YouTube caption'],
  ['pinterest', 'post', 500, 'characters', 'Pinterest caption'],
  ['pinterest', 'carousel', 500, 'characters', 'Pinterest caption'],
  ['mastodon', 'post', 500, 'characters', 'Mastodon caption'],
  ['mastodon', 'thread', 500, 'characters', 'Mastodon caption'],
  ['reddit', 'post', 5000, 'characters', 'Reddit caption'],
  ['reddit', 'carousel', 5000, 'characters', 'Reddit caption'],
];

describe('caption length at the limit', () => {
  it.each(LIMITS)('%s %s: %i passes', (platform, postType, max) => {
    expect(check(platform, postType, 'a'.repeat(max))).toBeNull();
  });

  it.each(LIMITS)('%s %s: %i + 1 fails', (platform, postType, max, unit, subject) => {
    expect(check(platform, postType, 'a'.repeat(max + 1))).toBe(`${subject} allows at most ${max} ${unit}; got ${max + 1} (account acc_1)`);
  });

  it.each(LIMITS)('%s %s: no caption and an empty caption pass', (platform, postType) => {
    expect(check(platform, postType, null)).toBeNull();
    expect(check(platform, postType, '')).toBeNull();
  });
});

describe('post types that take no caption', () => {
  it.each([
    ['instagram', 'Instagram'],
    ['facebook', 'Facebook'],
  ])('%s story refuses a caption, accepts none', (platform, name) => {
    expect(check(platform, 'story', 'Hello')).toBe(`${name} story allows no caption; got 5 characters (account acc_1)`);
    expect(check(platform, 'story', 'a')).toBe(`${name} story allows no caption; got 1 character (account acc_1)`);
    expect(check(platform, 'story', null)).toBeNull();
    expect(check(platform, 'story', '')).toBeNull();
  });
});

describe('caption counted in each platform unit', () => {
  it.each([
    // X: CJK weighs 2
    ['x', '日'.repeat(140), null],
    ['x', `${'日'.repeat(140)}a`, 'X caption allows at most 280 characters; got 281 (account acc_1)'],
    // X: an emoji sequence weighs 2 however many code points it has
    ['x', '👨‍👩‍👧‍👦'.repeat(140), null],
    ['x', `${'👨‍👩‍👧‍👦'.repeat(140)}a`, 'X caption allows at most 280 characters; got 281 (account acc_1)'],
    ['x', '🇯🇵'.repeat(140), null],
    // X: every link weighs 23 whatever its length
    ['x', `${'a'.repeat(256)} https://example.com/${'p'.repeat(300)}`, null],
    ['x', `${'a'.repeat(257)} https://example.com/${'p'.repeat(300)}`, 'X caption allows at most 280 characters; got 281 (account acc_1)'],
    ['x', `${'a'.repeat(256)} x.co`, null],
    ['x', `${'a'.repeat(257)} x.co`, 'X caption allows at most 280 characters; got 281 (account acc_1)'],
    // X: NFC first, so a decomposed é weighs 1
    ['x', 'e\u0301'.repeat(280), null],
    // Bluesky: graphemes, so a family emoji is 1, but also UTF-8 bytes (25 each)
    ['bluesky', '👨‍👩‍👧‍👦'.repeat(120), null],
    ['bluesky', `${'👨‍👩‍👧‍👦'.repeat(120)}a`, 'Bluesky caption allows at most 3000 bytes; got 3001 (account acc_1)'],
    ['bluesky', 'e\u0301'.repeat(300), null],
    ['bluesky', 'e\u0301'.repeat(301), 'Bluesky caption allows at most 300 characters; got 301 (account acc_1)'],
    ['bluesky', '🇯🇵'.repeat(300), null],
    ['bluesky', `${'a'.repeat(280)} https://example.com/abcdefghij`, 'Bluesky caption allows at most 300 characters; got 311 (account acc_1)'],
    // Mastodon: graphemes, links with a protocol weigh 23, remote mentions lose their domain
    ['mastodon', `${'a'.repeat(476)} https://example.com/${'p'.repeat(300)}`, null],
    ['mastodon', `${'a'.repeat(477)} https://example.com/${'p'.repeat(300)}`, 'Mastodon caption allows at most 500 characters; got 501 (account acc_1)'],
    ['mastodon', `${'a'.repeat(493)} @alice@mastodon.social`, null],
    ['mastodon', `${'a'.repeat(494)} @alice@mastodon.social`, 'Mastodon caption allows at most 500 characters; got 501 (account acc_1)'],
    ['mastodon', `${'👨‍👩‍👧‍👦'.repeat(500)}`, null],
    ['mastodon', `${'👨‍👩‍👧‍👦'.repeat(501)}`, 'Mastodon caption allows at most 500 characters; got 501 (account acc_1)'],
    // Threads: graphemes, but an emoji costs its UTF-8 bytes
    ['threads', '👍'.repeat(125), null],
    ['threads', `${'👍'.repeat(125)}a`, 'Threads caption allows at most 500 characters; got 501 (account acc_1)'],
    ['threads', '👨‍👩‍👧‍👦'.repeat(20), null],
    ['threads', `${'👨‍👩‍👧‍👦'.repeat(20)}a`, 'Threads caption allows at most 500 characters; got 501 (account acc_1)'],
    ['threads', 'e\u0301'.repeat(500), null],
    // TikTok: UTF-16 code units, so an astral emoji is 2
    ['tiktok', '👍'.repeat(1100), null],
    ['tiktok', `${'👍'.repeat(1100)}a`, 'TikTok post caption allows at most 2200 characters; got 2201 (account acc_1)'],
    // YouTube: UTF-8 bytes
    ['youtube', `${'日'.repeat(1666)}aa`, null],
    ['youtube', '日'.repeat(1667), 'YouTube caption allows at most 5000 bytes; got 5001 (account acc_1)'],
    // UTF-16 platforms: an astral emoji is 2
    ['linkedin', '👍'.repeat(1500), null],
    ['linkedin', `${'👍'.repeat(1500)}a`, 'LinkedIn caption allows at most 3000 characters; got 3001 (account acc_1)'],
  ])('%s: %#', (platform, caption, expected) => {
    const postType: PostType = 'post';
    expect(check(platform, postType, caption)).toBe(expected);
  });
});

describe('forbidden characters', () => {
  it.each([
    ['a < b', 'YouTube caption allows no < or >; got "<" (account acc_1)'],
    ['a > b', 'YouTube caption allows no < or >; got ">" (account acc_1)'],
    ['a ≤ b and a ‹ b', null],
  ])('YouTube description %j', (caption, expected) => {
    expect(check('youtube', 'post', caption)).toBe(expected);
    expect(check('youtube', 'short', caption)).toBe(expected);
  });

  it('checks length before forbidden characters', () => {
    expect(check('youtube', 'post', `<${'a'.repeat(5000)}`)).toBe('YouTube caption allows at most 5000 bytes; got 5001 (account acc_1)');
  });
});
