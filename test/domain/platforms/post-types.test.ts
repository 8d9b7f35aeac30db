import { describe, expect, it } from 'vitest';
import { findPlatformViolation, POST_TYPES } from '../../../src/domain/platforms/index.js';
import type { PostType } from '../../../src/domain/platforms/index.js';
import { target } from './helpers.js';

// The support matrix from platform-limits.md: thread is a reply chain on X, Threads,
// Bluesky and Mastodon, and one post carrying the full text on LinkedIn and Facebook.
const SUPPORTED: Record<string, { name: string; types: PostType[] }> = {
  x: { name: 'X', types: ['post', 'thread'] },
  instagram: { name: 'Instagram', types: ['post', 'carousel', 'reel', 'story'] },
  facebook: { name: 'Facebook', types: ['post', 'reel', 'story', 'thread'] },
  linkedin: { name: 'LinkedIn', types: ['post', 'thread'] },
  threads: { name: 'Threads', types: ['post', 'carousel', 'thread'] },
  bluesky: { name: 'Bluesky', types: ['post', 'thread'] },
  tiktok: { name: 'TikTok', types: ['post', 'carousel'] },
  youtube: { name: 'YouTube', types: ['post', 'short'] },
  pinterest: { name: 'Pinterest', types: ['post', 'carousel'] },
  mastodon: { name: 'Mastodon', types: ['post', 'thread'] },
  reddit: { name: 'Reddit', types: ['post', 'carousel'] },
};

function orList(items: readonly string[]): string {
  return items.length === 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1] ?? ''}`;
}

const MATRIX = Object.entries(SUPPORTED).flatMap(([platform, { name, types }]) =>
  POST_TYPES.map((postType) => [platform, postType, types.includes(postType), name, types] as const),
);

describe('post type support', () => {
  it.each(MATRIX)('%s %s (supported: %s)', (platform, postType, supported, name, types) => {
    const expected = supported ? null : `${name} allows post types ${orList(types)}; got ${postType} (account acc_1)`;
    expect(findPlatformViolation([target(platform, postType)])).toBe(expected);
  });

  it('uses the exact wording for a story sent to X', () => {
    expect(findPlatformViolation([target('x', 'story')])).toBe('X allows post types post or thread; got story (account acc_1)');
  });

  it('checks the post type before anything else', () => {
    expect(findPlatformViolation([target('x', 'reel', { caption: 'a'.repeat(1000), fields: { nope: 1 } })])).toBe(
      'X allows post types post or thread; got reel (account acc_1)',
    );
  });
});
