// Builders for the platform tests: a target that passes every rule of its platform and
// post type, so each test changes exactly one thing and expects exactly one message.

import type { MediaFacts, PostType, TargetToCheck } from '../../../src/domain/platforms/index.js';

export function image(overrides: Partial<MediaFacts> = {}): MediaFacts {
  return {
    id: 'med_img',
    kind: 'image',
    mime: 'image/jpeg',
    bytes: 500_000,
    width: 1080,
    height: 1080,
    durationMs: null,
    ...overrides,
  };
}

/** A 10 s vertical (9:16) MP4: accepted by every platform that takes video. */
export function video(overrides: Partial<MediaFacts> = {}): MediaFacts {
  return {
    id: 'med_vid',
    kind: 'video',
    mime: 'video/mp4',
    bytes: 5_000_000,
    width: 1080,
    height: 1920,
    durationMs: 10_000,
    ...overrides,
  };
}

export function images(count: number, overrides: Partial<MediaFacts> = {}): MediaFacts[] {
  return Array.from({ length: count }, (_, index) => image({ id: `med_img${index + 1}`, ...overrides }));
}

export function videos(count: number, overrides: Partial<MediaFacts> = {}): MediaFacts[] {
  return Array.from({ length: count }, (_, index) => video({ id: `med_vid${index + 1}`, ...overrides }));
}

// The smallest media set each post type needs; everything else needs none.
function requiredMedia(platform: string, postType: PostType): MediaFacts[] {
  const key = `${platform}:${postType}`;
  switch (key) {
    case 'instagram:post':
    case 'instagram:story':
    case 'facebook:story':
    case 'tiktok:carousel':
    case 'pinterest:post':
      return [image()];
    case 'instagram:carousel':
    case 'pinterest:carousel':
    case 'reddit:carousel':
    case 'threads:carousel':
      return images(2);
    case 'instagram:reel':
    case 'facebook:reel':
    case 'tiktok:post':
    case 'youtube:post':
    case 'youtube:short':
      return [video()];
    default:
      return [];
  }
}

function requiredFields(platform: string): Record<string, unknown> | null {
  return platform === 'reddit' ? { subreddit: 'test', title: 'A title' } : null;
}

/** A target that passes all checks for its platform and post type, with `overrides` applied. */
export function target(platform: string, postType: PostType = 'post', overrides: Partial<TargetToCheck> = {}): TargetToCheck {
  return {
    accountId: 'acc_1',
    platform,
    postType,
    caption: null,
    firstComment: null,
    media: requiredMedia(platform, postType),
    threadParts: null,
    fields: requiredFields(platform),
    ...overrides,
  };
}
