import { describe, expect, it } from 'vitest';
import { findPlatformViolation, isKnownPlatform, platformRules, POST_TYPES } from '../../../src/domain/platforms/index.js';
import { image, images, target, video } from './helpers.js';

const PLATFORM_IDS = ['x', 'instagram', 'facebook', 'linkedin', 'threads', 'bluesky', 'tiktok', 'youtube', 'pinterest', 'mastodon', 'reddit'];

describe('findPlatformViolation ordering', () => {
  it('returns null for no targets and for passing targets', () => {
    expect(findPlatformViolation([])).toBeNull();
    expect(findPlatformViolation(PLATFORM_IDS.map((platform) => target(platform)))).toBeNull();
  });

  it('reports the first failing target in request order', () => {
    const first = target('x', 'post', { accountId: 'acc_a', caption: 'a'.repeat(281) });
    const second = target('linkedin', 'post', { accountId: 'acc_b', caption: 'a'.repeat(3001) });
    expect(findPlatformViolation([first, second])).toBe('X caption allows at most 280 characters; got 281 (account acc_a)');
    expect(findPlatformViolation([second, first])).toBe('LinkedIn caption allows at most 3000 characters; got 3001 (account acc_b)');
  });

  it('skips passing targets to reach a failing one', () => {
    expect(findPlatformViolation([target('x', 'post', { caption: 'fine' }), target('instagram', 'post', { accountId: 'acc_ig', media: [] })])).toBe(
      'Instagram post allows between 1 and 10 files; got 0 (account acc_ig)',
    );
  });

  // One target breaking every rule at once; each step fixed in turn reveals the next.
  it('checks post type, caption, media, thread parts, first comment, fields in that order', () => {
    const broken = {
      caption: 'a'.repeat(2201),
      media: images(11),
      threadParts: ['a', 'b'],
      firstComment: 'a'.repeat(2197),
      fields: { nope: true },
    };
    expect(findPlatformViolation([target('instagram', 'thread', broken)])).toBe(
      'Instagram allows post types post, carousel, reel or story; got thread (account acc_1)',
    );
    expect(findPlatformViolation([target('instagram', 'post', broken)])).toBe(
      'Instagram post caption allows at most 2200 characters; got 2201 (account acc_1)',
    );
    const captionFixed = { ...broken, caption: 'ok' };
    expect(findPlatformViolation([target('instagram', 'post', captionFixed)])).toBe('Instagram post allows between 1 and 10 files; got 11 (account acc_1)');
    const mediaFixed = { ...captionFixed, media: [image()] };
    expect(findPlatformViolation([target('instagram', 'post', mediaFixed)])).toBe('Instagram post allows no thread parts; got 2 (account acc_1)');
    const partsFixed = { ...mediaFixed, threadParts: null };
    expect(findPlatformViolation([target('instagram', 'post', partsFixed)])).toBe(
      'Instagram post first comment allows at most 2196 characters; got 2197 (account acc_1)',
    );
    const commentFixed = { ...partsFixed, firstComment: 'ok' };
    expect(findPlatformViolation([target('instagram', 'post', commentFixed)])).toBe(
      'Instagram allows fields collaborators, locationId, shareToFeed or thumbOffsetMs; got "nope" (account acc_1)',
    );
    expect(findPlatformViolation([target('instagram', 'post', { ...commentFixed, fields: null })])).toBeNull();
  });

  it('checks media in order: count, kinds, mixing, per-kind count, then each file in order', () => {
    const tooBig = video({ id: 'med_big', bytes: 600_000_000 });
    const tooLong = video({ id: 'med_long', durationMs: 200_000 });
    expect(findPlatformViolation([target('x', 'post', { media: [image(), tooBig] })])).toBe(
      'X allows images or videos, not both; got 1 image and 1 video (account acc_1)',
    );
    expect(findPlatformViolation([target('x', 'post', { media: [tooLong, tooBig] })])).toBe('X allows at most 1 video; got 2 (account acc_1)');
    expect(findPlatformViolation([target('instagram', 'carousel', { media: [tooLong, tooBig] })])).toBe(
      'Instagram carousel video allows a duration between 3 and 60 seconds; got 200 seconds (media med_long, account acc_1)',
    );
  });

  it('checks a file in order: type, size, aspect ratio, duration', () => {
    const file = video({ mime: 'video/webm', bytes: 999_000_000, width: 4000, height: 1000, durationMs: 999_000 });
    const run = (overrides: Partial<typeof file>): string | null => findPlatformViolation([target('x', 'post', { media: [{ ...file, ...overrides }] })]);
    expect(run({})).toBe('X video allows video/mp4 or video/quicktime; got video/webm (media med_vid, account acc_1)');
    expect(run({ mime: 'video/mp4' })).toBe('X video allows at most 512 MB; got 999 MB (media med_vid, account acc_1)');
    expect(run({ mime: 'video/mp4', bytes: 1 })).toBe(
      'X video allows an aspect ratio (width/height) between 0.3333 and 3; got 4 from 4000x1000 (media med_vid, account acc_1)',
    );
    expect(run({ mime: 'video/mp4', bytes: 1, width: 1000 })).toBe(
      'X video allows a duration between 0.5 and 140 seconds; got 999 seconds (media med_vid, account acc_1)',
    );
  });
});

describe('unknown platforms', () => {
  it('names the supported platforms', () => {
    expect(findPlatformViolation([target('myspace')])).toBe(
      'Platform must be one of x, instagram, facebook, linkedin, threads, bluesky, tiktok, youtube, pinterest, mastodon or reddit; got "myspace" (account acc_1)',
    );
  });

  it('isKnownPlatform follows the table', () => {
    for (const id of PLATFORM_IDS) expect(isKnownPlatform(id)).toBe(true);
    expect(isKnownPlatform('myspace')).toBe(false);
    expect(isKnownPlatform('X')).toBe(false);
    expect(isKnownPlatform('')).toBe(false);
  });
});

describe('platformRules (served as JSON by GET /api/v1/platforms)', () => {
  it('lists the eleven platforms in order', () => {
    expect(platformRules.map((platform) => platform.id)).toEqual(PLATFORM_IDS);
    expect(platformRules.map((platform) => platform.displayName)).toEqual([
      'X',
      'Instagram',
      'Facebook',
      'LinkedIn',
      'Threads',
      'Bluesky',
      'TikTok',
      'YouTube',
      'Pinterest',
      'Mastodon',
      'Reddit',
    ]);
  });

  it('survives a JSON round trip unchanged (no undefined, functions or class instances)', () => {
    const roundTripped: unknown = JSON.parse(JSON.stringify(platformRules));
    expect(roundTripped).toEqual(platformRules);
  });

  it('uses camelCase property names only', () => {
    const keys = new Set<string>();
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) {
        for (const item of value as unknown[]) walk(item);
      } else if (typeof value === 'object' && value !== null) {
        for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
          keys.add(key);
          walk(child);
        }
      }
    };
    walk(platformRules);
    for (const key of keys) expect(key).toMatch(/^[a-z][a-zA-Z0-9]*$/);
  });

  it('is frozen, so no caller can change a limit at runtime', () => {
    expect(Object.isFrozen(platformRules)).toBe(true);
    const x = platformRules[0];
    expect(x && Object.isFrozen(x.postTypes[0]?.media)).toBe(true);
  });

  it.each(platformRules.map((platform) => [platform.id, platform] as const))('%s is consistent', (_id, platform) => {
    const types = platform.postTypes.map((type) => type.postType);
    // post types are unique and in vocabulary order
    expect(types).toEqual(POST_TYPES.filter((postType) => types.includes(postType)));
    // thread rules exist exactly when the thread post type is supported
    expect(platform.thread !== null).toBe(types.includes('thread'));
    if (platform.thread !== null) {
      const chain = ['x', 'threads', 'bluesky', 'mastodon'].includes(platform.id);
      expect(platform.thread.style).toBe(chain ? 'chain' : 'single');
      expect(platform.thread.minParts).toBeLessThanOrEqual(platform.thread.maxParts);
    }
    for (const type of platform.postTypes) {
      const { media } = type;
      expect(media.minFiles).toBeLessThanOrEqual(media.maxFiles);
      expect(media.image !== null || media.video !== null).toBe(true);
      for (const kind of [media.image, media.video]) {
        if (kind === null) continue;
        expect(kind.maxCount).toBeLessThanOrEqual(media.maxFiles);
        expect(kind.mimeTypes.length).toBeGreaterThan(0);
      }
      for (const text of [type.caption, type.firstComment]) {
        if (text !== null) expect(text.limits.length).toBeGreaterThan(0);
      }
    }
    const keys = platform.fields.map((field) => field.key);
    expect(new Set(keys).size).toBe(keys.length);
    for (const field of platform.fields) {
      if (field.pattern !== null) expect(() => new RegExp(field.pattern ?? '', 'u')).not.toThrow();
    }
  });
});
