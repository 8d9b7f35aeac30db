import { describe, expect, it } from 'vitest';
import { findPlatformViolation } from '../../../src/domain/platforms/index.js';
import type { PostType } from '../../../src/domain/platforms/index.js';
import { target } from './helpers.js';

function check(platform: string, threadParts: string[] | null, caption: string | null = null): string | null {
  return findPlatformViolation([target(platform, 'thread', { threadParts, caption })]);
}

describe('chain-style threads', () => {
  // [platform, display name, part limit, unit word]
  const CHAINS: Array<[string, string, number]> = [
    ['x', 'X', 280],
    ['threads', 'Threads', 500],
    ['bluesky', 'Bluesky', 300],
    ['mastodon', 'Mastodon', 500],
  ];

  it.each(CHAINS)('%s: 1 and 80 parts pass', (platform) => {
    expect(check(platform, ['only part'])).toBeNull();
    expect(
      check(
        platform,
        Array.from({ length: 80 }, (_, index) => `part ${index + 1}`),
      ),
    ).toBeNull();
  });

  it.each(CHAINS)('%s: 81 parts fail', (platform, name) => {
    expect(
      check(
        platform,
        Array.from({ length: 81 }, () => 'part'),
      ),
    ).toBe(`${name} thread allows between 1 and 80 parts; got 81 (account acc_1)`);
  });

  it.each(CHAINS)('%s: an empty list of parts fails', (platform, name) => {
    expect(check(platform, [])).toBe(`${name} thread allows between 1 and 80 parts; got 0 (account acc_1)`);
  });

  it.each(CHAINS)('%s: each part is held to the part limit (%i)', (platform, name, max) => {
    expect(check(platform, ['first', 'a'.repeat(max), 'last'])).toBeNull();
    expect(check(platform, ['first', 'a'.repeat(max + 1), 'a'.repeat(max + 5)])).toBe(
      `${name} thread part 2 allows at most ${max} characters; got ${max + 1} (account acc_1)`,
    );
  });

  it('counts parts in the platform unit (X: links 23, CJK 2)', () => {
    expect(check('x', ['日'.repeat(140), `${'a'.repeat(256)} https://example.com/${'p'.repeat(100)}`])).toBeNull();
    expect(check('x', [`${'日'.repeat(140)}a`])).toBe('X thread part 1 allows at most 280 characters; got 281 (account acc_1)');
  });

  it('counts Bluesky parts in bytes as well as graphemes', () => {
    expect(check('bluesky', ['👨‍👩‍👧‍👦'.repeat(120)])).toBeNull();
    expect(check('bluesky', [`${'👨‍👩‍👧‍👦'.repeat(120)}a`])).toBe('Bluesky thread part 1 allows at most 3000 bytes; got 3001 (account acc_1)');
  });

  it('does not hold the caption to the part limit when parts are given', () => {
    // The default caption may be the long text meant for other targets (e.g. LinkedIn).
    expect(check('x', ['short part'], 'a'.repeat(3000))).toBeNull();
  });

  it('holds the caption to the limit when no parts are given (a one-part thread)', () => {
    expect(check('x', null, 'a'.repeat(280))).toBeNull();
    expect(check('x', null, 'a'.repeat(281))).toBe('X caption allows at most 280 characters; got 281 (account acc_1)');
  });
});

describe('single-element threads (LinkedIn, Facebook)', () => {
  const SINGLES: Array<[string, string, number, string]> = [
    ['linkedin', 'LinkedIn', 3000, 'LinkedIn'],
    ['facebook', 'Facebook', 5000, 'Facebook'],
  ];

  it.each(SINGLES)('%s: one element with the full text passes', (platform, _name, max) => {
    expect(check(platform, ['a'.repeat(max)])).toBeNull();
  });

  it.each(SINGLES)('%s: the element is held to the post limit', (platform, name, max) => {
    expect(check(platform, ['a'.repeat(max + 1)])).toBe(`${name} thread part 1 allows at most ${max} characters; got ${max + 1} (account acc_1)`);
  });

  it.each(SINGLES)('%s: two elements fail', (platform, name) => {
    expect(check(platform, ['one', 'two'])).toBe(`${name} thread allows exactly 1 part carrying the full text; got 2 (account acc_1)`);
  });

  it.each(SINGLES)('%s: no element fails', (platform, name) => {
    expect(check(platform, [])).toBe(`${name} thread allows exactly 1 part carrying the full text; got 0 (account acc_1)`);
  });

  it.each(SINGLES)('%s: without parts the caption is the single element', (platform, _name, max, subject) => {
    expect(check(platform, null, 'a'.repeat(max))).toBeNull();
    const captionSubject = platform === 'facebook' ? `${subject} thread caption` : `${subject} caption`;
    expect(check(platform, null, 'a'.repeat(max + 1))).toBe(`${captionSubject} allows at most ${max} characters; got ${max + 1} (account acc_1)`);
  });
});

describe('thread parts on other post types', () => {
  it.each([
    ['x', 'post', 'X post allows no thread parts (they need post type thread)'],
    ['linkedin', 'post', 'LinkedIn post allows no thread parts (they need post type thread)'],
    ['threads', 'carousel', 'Threads carousel allows no thread parts (they need post type thread)'],
    ['facebook', 'reel', 'Facebook reel allows no thread parts (they need post type thread)'],
    ['instagram', 'post', 'Instagram post allows no thread parts'],
    ['instagram', 'reel', 'Instagram reel allows no thread parts'],
    ['youtube', 'short', 'YouTube short allows no thread parts'],
    ['reddit', 'post', 'Reddit post allows no thread parts'],
  ] as Array<[string, PostType, string]>)('%s %s refuses thread parts', (platform, postType, rule) => {
    expect(findPlatformViolation([target(platform, postType, { threadParts: ['a', 'b'] })])).toBe(`${rule}; got 2 (account acc_1)`);
  });

  it('ignores an empty list of parts on other post types', () => {
    expect(findPlatformViolation([target('x', 'post', { threadParts: [] })])).toBeNull();
  });
});
