import { describe, expect, it } from 'vitest';
import { findPlatformViolation } from '../../../src/domain/platforms/index.js';
import type { PostType } from '../../../src/domain/platforms/index.js';
import { target } from './helpers.js';

function check(platform: string, postType: PostType, firstComment: string | null): string | null {
  return findPlatformViolation([target(platform, postType, { firstComment })]);
}

describe('first comment length', () => {
  // [platform, post type, limit, unit word, message subject]
  const LIMITS: Array<[string, PostType, number, string, string]> = [
    ['x', 'post', 280, 'characters', 'X first comment'],
    ['x', 'thread', 280, 'characters', 'X first comment'],
    ['instagram', 'post', 2196, 'characters', 'Instagram post first comment'],
    ['instagram', 'carousel', 2196, 'characters', 'Instagram carousel first comment'],
    ['instagram', 'reel', 2196, 'characters', 'Instagram reel first comment'],
    ['facebook', 'post', 8000, 'characters', 'Facebook post first comment'],
    ['facebook', 'reel', 8000, 'characters', 'Facebook reel first comment'],
    ['facebook', 'thread', 8000, 'characters', 'Facebook thread first comment'],
    ['linkedin', 'post', 1250, 'characters', 'LinkedIn first comment'],
    ['threads', 'post', 500, 'characters', 'Threads first comment'],
    ['threads', 'carousel', 500, 'characters', 'Threads first comment'],
    ['bluesky', 'post', 300, 'characters', 'Bluesky first comment'],
    ['youtube', 'post', 10000, 'characters', 'YouTube first comment'],
    ['youtube', 'short', 10000, 'characters', 'YouTube first comment'],
    ['mastodon', 'post', 500, 'characters', 'Mastodon first comment'],
    ['reddit', 'post', 10000, 'characters', 'Reddit first comment'],
    ['reddit', 'carousel', 10000, 'characters', 'Reddit first comment'],
  ];

  it.each(LIMITS)('%s %s: %i passes', (platform, postType, max) => {
    expect(check(platform, postType, 'a'.repeat(max))).toBeNull();
  });

  it.each(LIMITS)('%s %s: %i + 1 fails', (platform, postType, max, unit, subject) => {
    expect(check(platform, postType, 'a'.repeat(max + 1))).toBe(`${subject} allows at most ${max} ${unit}; got ${max + 1} (account acc_1)`);
  });

  it('counts in the platform unit (X weighs links 23, Bluesky counts bytes too)', () => {
    expect(check('x', 'post', `${'a'.repeat(256)} https://example.com/${'p'.repeat(100)}`)).toBeNull();
    expect(check('bluesky', 'post', `${'👨‍👩‍👧‍👦'.repeat(120)}a`)).toBe('Bluesky first comment allows at most 3000 bytes; got 3001 (account acc_1)');
  });
});

describe('platforms and post types without a first comment', () => {
  it.each([
    ['tiktok', 'post', 'TikTok'],
    ['tiktok', 'carousel', 'TikTok'],
    ['pinterest', 'post', 'Pinterest'],
    ['pinterest', 'carousel', 'Pinterest'],
    ['instagram', 'story', 'Instagram story'],
    ['facebook', 'story', 'Facebook story'],
  ] as Array<[string, PostType, string]>)('%s %s refuses one', (platform, postType, subject) => {
    expect(check(platform, postType, 'Thanks!')).toBe(`${subject} allows no first comment; got 7 characters (account acc_1)`);
  });

  it.each([
    ['tiktok', 'post'],
    ['pinterest', 'post'],
    ['instagram', 'story'],
  ] as Array<[string, PostType]>)('%s %s accepts none or an empty one', (platform, postType) => {
    expect(check(platform, postType, null)).toBeNull();
    expect(check(platform, postType, '')).toBeNull();
  });
});
