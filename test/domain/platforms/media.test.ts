import { describe, expect, it } from 'vitest';
import { findPlatformViolation } from '../../../src/domain/platforms/index.js';
import type { MediaFacts, PostType } from '../../../src/domain/platforms/index.js';
import { image, images, target, video, videos } from './helpers.js';

function check(platform: string, postType: PostType, media: MediaFacts[]): string | null {
  return findPlatformViolation([target(platform, postType, { media })]);
}

describe('file count', () => {
  // [platform, post type, kind used to fill, min, max, message subject, allowed count phrase]
  const COUNTS: Array<[string, PostType, 'image' | 'video', number, number, string, string]> = [
    ['x', 'post', 'image', 0, 4, 'X', 'at most 4 files'],
    ['x', 'thread', 'image', 0, 4, 'X', 'at most 4 files'],
    ['instagram', 'post', 'image', 1, 10, 'Instagram post', 'between 1 and 10 files'],
    ['instagram', 'carousel', 'image', 2, 10, 'Instagram carousel', 'between 2 and 10 files'],
    ['instagram', 'reel', 'video', 1, 1, 'Instagram reel', 'exactly 1 file'],
    ['instagram', 'story', 'image', 1, 1, 'Instagram story', 'exactly 1 file'],
    ['facebook', 'post', 'image', 0, 10, 'Facebook post', 'at most 10 files'],
    ['facebook', 'thread', 'image', 0, 10, 'Facebook thread', 'at most 10 files'],
    ['facebook', 'reel', 'video', 1, 1, 'Facebook reel', 'exactly 1 file'],
    ['facebook', 'story', 'image', 1, 1, 'Facebook story', 'exactly 1 file'],
    ['linkedin', 'post', 'image', 0, 20, 'LinkedIn', 'at most 20 files'],
    ['linkedin', 'thread', 'image', 0, 20, 'LinkedIn', 'at most 20 files'],
    ['threads', 'post', 'image', 0, 1, 'Threads post', 'at most 1 file'],
    ['threads', 'thread', 'video', 0, 1, 'Threads thread', 'at most 1 file'],
    ['threads', 'carousel', 'image', 2, 20, 'Threads carousel', 'between 2 and 20 files'],
    ['bluesky', 'post', 'image', 0, 4, 'Bluesky', 'at most 4 files'],
    ['tiktok', 'post', 'video', 1, 1, 'TikTok post', 'exactly 1 file'],
    ['tiktok', 'carousel', 'image', 1, 35, 'TikTok carousel', 'between 1 and 35 files'],
    ['youtube', 'post', 'video', 1, 1, 'YouTube post', 'exactly 1 file'],
    ['youtube', 'short', 'video', 1, 1, 'YouTube short', 'exactly 1 file'],
    ['pinterest', 'post', 'image', 1, 1, 'Pinterest post', 'exactly 1 file'],
    ['pinterest', 'carousel', 'image', 2, 5, 'Pinterest carousel', 'between 2 and 5 files'],
    ['mastodon', 'post', 'image', 0, 4, 'Mastodon', 'at most 4 files'],
    ['reddit', 'post', 'image', 0, 1, 'Reddit post', 'at most 1 file'],
    ['reddit', 'carousel', 'image', 2, 20, 'Reddit carousel', 'between 2 and 20 files'],
  ];
  const fill = (kind: 'image' | 'video', count: number): MediaFacts[] => (kind === 'image' ? images(count) : videos(count));

  it.each(COUNTS)('%s %s: %i and %i files pass', (platform, postType, kind, min, max) => {
    expect(check(platform, postType, fill(kind, min))).toBeNull();
    expect(check(platform, postType, fill(kind, max))).toBeNull();
  });

  it.each(COUNTS)('%s %s: max + 1 fails', (platform, postType, kind, _min, max, subject, phrase) => {
    expect(check(platform, postType, fill(kind, max + 1))).toBe(`${subject} allows ${phrase}; got ${max + 1} (account acc_1)`);
  });

  it.each(COUNTS.filter((row) => row[3] > 0))('%s %s: min - 1 fails (media required)', (platform, postType, kind, min, _max, subject, phrase) => {
    expect(check(platform, postType, fill(kind, min - 1))).toBe(`${subject} allows ${phrase}; got ${min - 1} (account acc_1)`);
  });

  it('words the interface example for an Instagram post', () => {
    expect(check('instagram', 'post', images(12))).toBe('Instagram post allows between 1 and 10 files; got 12 (account acc_1)');
  });
});

describe('Reddit video (through the media lease, as PRAW and Postiz upload it)', () => {
  it('takes one MP4 or MOV of up to 15 minutes and 1 GB in a post', () => {
    expect(check('reddit', 'post', [video({ durationMs: 900_000, bytes: 1_000_000_000 })])).toBeNull();
    expect(check('reddit', 'post', [video({ mime: 'video/quicktime' })])).toBeNull();
    expect(check('reddit', 'post', [video({ durationMs: 901_000 })])).toBe(
      'Reddit post video allows a duration of at most 900 seconds; got 901 seconds (media med_vid, account acc_1)',
    );
    expect(check('reddit', 'post', [video({ bytes: 1_000_000_001 })])).toMatch(/^Reddit post video allows at most 1 GB; got/);
    expect(check('reddit', 'post', [video({ mime: 'video/webm' })])).toMatch(/^Reddit post video allows video\/mp4 or video\/quicktime; got video\/webm/);
  });
});

describe('media kinds a post type accepts', () => {
  it.each([
    ['instagram', 'reel', [image()], 'Instagram reel allows only videos; got an image (media med_img, account acc_1)'],
    ['facebook', 'reel', [image()], 'Facebook reel allows only videos; got an image (media med_img, account acc_1)'],
    ['tiktok', 'post', [image()], 'TikTok post allows only videos; got an image (media med_img, account acc_1)'],
    ['tiktok', 'carousel', [video()], 'TikTok carousel allows only images; got a video (media med_vid, account acc_1)'],
    ['youtube', 'post', [image()], 'YouTube post allows only videos; got an image (media med_img, account acc_1)'],
    ['youtube', 'short', [image()], 'YouTube short allows only videos; got an image (media med_img, account acc_1)'],
    ['pinterest', 'carousel', [image(), video()], 'Pinterest carousel allows only images; got a video (media med_vid, account acc_1)'],
    ['reddit', 'carousel', [image(), video()], 'Reddit carousel allows only images; got a video (media med_vid, account acc_1)'],
  ] as Array<[string, PostType, MediaFacts[], string]>)('%s %s', (platform, postType, media, expected) => {
    expect(check(platform, postType, media)).toBe(expected);
  });

  it.each([
    ['instagram', 'story', [video()]],
    ['facebook', 'story', [video()]],
    ['pinterest', 'post', [video()]],
    ['threads', 'post', [video()]],
  ] as Array<[string, PostType, MediaFacts[]]>)('%s %s takes a video too', (platform, postType, media) => {
    expect(check(platform, postType, media)).toBeNull();
  });
});

describe('mixing images and videos', () => {
  it.each([
    ['x', 'post', 'X'],
    ['facebook', 'post', 'Facebook post'],
    ['facebook', 'thread', 'Facebook thread'],
    ['linkedin', 'post', 'LinkedIn'],
    ['bluesky', 'post', 'Bluesky'],
    ['mastodon', 'post', 'Mastodon'],
  ] as Array<[string, PostType, string]>)('%s %s refuses a mix', (platform, postType, subject) => {
    expect(check(platform, postType, [image(), video()])).toBe(`${subject} allows images or videos, not both; got 1 image and 1 video (account acc_1)`);
  });

  it.each([
    ['instagram', 'post'],
    ['instagram', 'carousel'],
    ['threads', 'carousel'],
  ] as Array<[string, PostType]>)('%s %s accepts a mix', (platform, postType) => {
    expect(check(platform, postType, [image(), video()])).toBeNull();
  });

  it('names both counts', () => {
    expect(check('x', 'post', [...images(2), video()])).toBe('X allows images or videos, not both; got 2 images and 1 video (account acc_1)');
  });
});

describe('per-kind counts', () => {
  it.each([
    ['x', 'post', 'X'],
    ['facebook', 'post', 'Facebook post'],
    ['linkedin', 'post', 'LinkedIn'],
    ['bluesky', 'post', 'Bluesky'],
    ['mastodon', 'post', 'Mastodon'],
  ] as Array<[string, PostType, string]>)('%s %s: 1 video passes, 2 fail', (platform, postType, subject) => {
    expect(check(platform, postType, videos(1))).toBeNull();
    expect(check(platform, postType, videos(2))).toBe(`${subject} allows at most 1 video; got 2 (account acc_1)`);
  });
});

describe('X animated GIF', () => {
  it('must be the only file', () => {
    expect(check('x', 'post', [image({ id: 'med_gif', mime: 'image/gif' })])).toBeNull();
    expect(check('x', 'post', [image({ id: 'med_gif', mime: 'image/gif' }), image()])).toBe(
      'X image/gif allows no other files in the post; got 2 files (media med_gif, account acc_1)',
    );
  });
});

describe('file size', () => {
  // [platform, post type, file at the limit, limit in the message, size just over it, subject]
  const SIZES: Array<[string, PostType, MediaFacts, string, string, string]> = [
    ['x', 'post', image({ bytes: 5_000_000 }), '5 MB', '5.000001 MB', 'X image'],
    ['x', 'post', image({ bytes: 15_000_000, mime: 'image/gif' }), '15 MB', '15.000001 MB', 'X image/gif'],
    ['x', 'post', video({ bytes: 512_000_000 }), '512 MB', '512.000001 MB', 'X video'],
    ['instagram', 'post', image({ bytes: 8_000_000 }), '8 MB', '8.000001 MB', 'Instagram post image'],
    ['instagram', 'post', video({ bytes: 100_000_000 }), '100 MB', '100.000001 MB', 'Instagram post video'],
    ['instagram', 'reel', video({ bytes: 300_000_000 }), '300 MB', '300.000001 MB', 'Instagram reel video'],
    ['instagram', 'story', image({ bytes: 8_000_000 }), '8 MB', '8.000001 MB', 'Instagram story image'],
    ['instagram', 'story', video({ bytes: 100_000_000 }), '100 MB', '100.000001 MB', 'Instagram story video'],
    ['facebook', 'post', image({ bytes: 4_000_000 }), '4 MB', '4.000001 MB', 'Facebook post image'],
    ['facebook', 'post', video({ bytes: 10_000_000_000 }), '10 GB', '10.000000001 GB', 'Facebook post video'],
    ['facebook', 'story', image({ bytes: 4_000_000 }), '4 MB', '4.000001 MB', 'Facebook story image'],
    ['linkedin', 'post', image({ bytes: 5_000_000 }), '5 MB', '5.000001 MB', 'LinkedIn image'],
    ['linkedin', 'post', video({ bytes: 500_000_000 }), '500 MB', '500.000001 MB', 'LinkedIn video'],
    ['threads', 'post', image({ bytes: 8_000_000 }), '8 MB', '8.000001 MB', 'Threads post image'],
    ['threads', 'post', video({ bytes: 1_000_000_000 }), '1 GB', '1.000000001 GB', 'Threads post video'],
    ['bluesky', 'post', image({ bytes: 1_000_000 }), '1 MB', '1.000001 MB', 'Bluesky image'],
    ['bluesky', 'post', video({ bytes: 100_000_000 }), '100 MB', '100.000001 MB', 'Bluesky video'],
    ['tiktok', 'post', video({ bytes: 4_000_000_000 }), '4 GB', '4.000000001 GB', 'TikTok post video'],
    ['tiktok', 'carousel', image({ bytes: 20_000_000 }), '20 MB', '20.000001 MB', 'TikTok carousel image'],
    ['youtube', 'post', video({ bytes: 256_000_000_000 }), '256 GB', '256.000000001 GB', 'YouTube post video'],
    ['youtube', 'short', video({ bytes: 256_000_000_000 }), '256 GB', '256.000000001 GB', 'YouTube short video'],
    ['pinterest', 'post', image({ bytes: 20_000_000 }), '20 MB', '20.000001 MB', 'Pinterest post image'],
    ['pinterest', 'post', video({ bytes: 2_000_000_000 }), '2 GB', '2.000000001 GB', 'Pinterest post video'],
    ['mastodon', 'post', image({ bytes: 16_777_216 }), '16777216 bytes', '16777217 bytes', 'Mastodon image'],
    ['mastodon', 'post', video({ bytes: 103_809_024 }), '103809024 bytes', '103809025 bytes', 'Mastodon video'],
    ['reddit', 'post', image({ bytes: 10_000_000 }), '10 MB', '10.000001 MB', 'Reddit post image'],
  ];

  it.each(SIZES)('%s %s: a file at the limit passes', (platform, postType, file) => {
    expect(check(platform, postType, [file])).toBeNull();
  });

  it.each(SIZES)('%s %s: one byte over fails', (platform, postType, file, limit, over, subject) => {
    expect(check(platform, postType, [{ ...file, bytes: file.bytes + 1 }])).toBe(
      `${subject} allows at most ${limit}; got ${over} (media ${file.id}, account acc_1)`,
    );
  });

  it('LinkedIn video has a minimum size', () => {
    expect(check('linkedin', 'post', [video({ bytes: 75_000 })])).toBeNull();
    expect(check('linkedin', 'post', [video({ bytes: 74_999 })])).toBe('LinkedIn video allows at least 75 KB; got 74.999 KB (media med_vid, account acc_1)');
  });
});

describe('MIME types', () => {
  // [platform, post type, kind, accepted list as worded, a refused type]
  const MIMES: Array<[string, PostType, 'image' | 'video', string, string, string]> = [
    ['x', 'post', 'image', 'image/jpeg, image/png, image/gif or image/webp', 'image/tiff', 'X image'],
    ['x', 'post', 'video', 'video/mp4 or video/quicktime', 'video/webm', 'X video'],
    ['instagram', 'post', 'image', 'image/jpeg', 'image/png', 'Instagram post image'],
    ['instagram', 'post', 'video', 'video/mp4 or video/quicktime', 'video/webm', 'Instagram post video'],
    ['instagram', 'reel', 'video', 'video/mp4 or video/quicktime', 'video/webm', 'Instagram reel video'],
    ['instagram', 'story', 'image', 'image/jpeg', 'image/png', 'Instagram story image'],
    ['instagram', 'story', 'video', 'video/mp4 or video/quicktime', 'video/webm', 'Instagram story video'],
    ['facebook', 'post', 'image', 'image/jpeg, image/png, image/gif, image/bmp or image/tiff', 'image/webp', 'Facebook post image'],
    ['facebook', 'post', 'video', 'video/mp4 or video/quicktime', 'video/webm', 'Facebook post video'],
    ['facebook', 'reel', 'video', 'video/mp4', 'video/quicktime', 'Facebook reel video'],
    ['facebook', 'story', 'video', 'video/mp4', 'video/quicktime', 'Facebook story video'],
    ['linkedin', 'post', 'image', 'image/jpeg, image/png or image/gif', 'image/webp', 'LinkedIn image'],
    ['linkedin', 'post', 'video', 'video/mp4', 'video/quicktime', 'LinkedIn video'],
    ['threads', 'post', 'image', 'image/jpeg or image/png', 'image/gif', 'Threads post image'],
    ['threads', 'post', 'video', 'video/mp4 or video/quicktime', 'video/webm', 'Threads post video'],
    ['bluesky', 'post', 'image', 'image/jpeg, image/png or image/webp', 'image/gif', 'Bluesky image'],
    ['bluesky', 'post', 'video', 'video/mp4, video/quicktime, video/webm or video/mpeg', 'video/x-msvideo', 'Bluesky video'],
    ['tiktok', 'post', 'video', 'video/mp4, video/webm or video/quicktime', 'video/mpeg', 'TikTok post video'],
    ['tiktok', 'carousel', 'image', 'image/jpeg or image/webp', 'image/png', 'TikTok carousel image'],
    ['youtube', 'post', 'video', 'video/*', 'image/gif', 'YouTube post video'],
    ['pinterest', 'post', 'image', 'image/jpeg, image/png, image/bmp, image/tiff or image/webp', 'image/gif', 'Pinterest post image'],
    ['pinterest', 'post', 'video', 'video/mp4, video/quicktime or video/x-m4v', 'video/webm', 'Pinterest post video'],
    ['mastodon', 'post', 'image', 'image/jpeg, image/png, image/gif, image/heic, image/heif, image/webp or image/avif', 'image/tiff', 'Mastodon image'],
    ['mastodon', 'post', 'video', 'video/webm, video/mp4 or video/quicktime', 'video/mpeg', 'Mastodon video'],
    ['reddit', 'post', 'image', 'image/jpeg, image/png, image/gif or image/webp', 'image/tiff', 'Reddit post image'],
  ];
  const file = (kind: 'image' | 'video', mime: string): MediaFacts => (kind === 'image' ? image({ mime }) : video({ mime }));

  it.each(MIMES)('%s %s %s: every listed type passes', (platform, postType, kind, accepted) => {
    for (const mime of accepted.split(/, | or /).filter((entry) => !entry.endsWith('/*'))) {
      expect(check(platform, postType, [file(kind, mime)])).toBeNull();
    }
  });

  it.each(MIMES)('%s %s %s: %s is refused', (platform, postType, kind, accepted, refused, subject) => {
    const media = file(kind, refused);
    expect(check(platform, postType, [media])).toBe(`${subject} allows ${accepted}; got ${refused} (media ${media.id}, account acc_1)`);
  });

  it.each(['IMAGE/JPEG', 'image/jpg', 'image/jpeg; charset=binary'])('normalises %j', (mime) => {
    expect(check('instagram', 'post', [image({ mime })])).toBeNull();
  });

  it('accepts any video type where the platform does (video/*)', () => {
    expect(check('youtube', 'post', [video({ mime: 'video/x-msvideo' })])).toBeNull();
  });
});

describe('aspect ratio (width/height, 1% tolerance)', () => {
  // [platform, post type, kind, accepted sizes, refused size, phrase, ratio shown, subject]
  const RATIOS: Array<[string, PostType, 'image' | 'video', Array<[number, number]>, [number, number], string, string, string]> = [
    [
      'x',
      'post',
      'video',
      [
        [1000, 3000],
        [1000, 3020],
        [3000, 1000],
        [3020, 1000],
      ],
      [3040, 1000],
      'between 0.3333 and 3',
      '3.04',
      'X video',
    ],
    ['x', 'post', 'video', [[1000, 3020]], [1000, 3040], 'between 0.3333 and 3', '0.3289', 'X video'],
    [
      'instagram',
      'post',
      'image',
      [
        [1080, 1350],
        [1070, 1350],
        [1080, 566],
        [1080, 560],
      ],
      [1060, 1350],
      'between 0.8 and 1.91',
      '0.7852',
      'Instagram post image',
    ],
    ['instagram', 'post', 'image', [[1080, 560]], [1080, 555], 'between 0.8 and 1.91', '1.9459', 'Instagram post image'],
    [
      'instagram',
      'post',
      'video',
      [
        [100, 10000],
        [10000, 1000],
      ],
      [10200, 1000],
      'between 0.01 and 10',
      '10.2',
      'Instagram post video',
    ],
    [
      'instagram',
      'reel',
      'video',
      [
        [100, 10000],
        [99, 10000],
      ],
      [98, 10000],
      'between 0.01 and 10',
      '0.0098',
      'Instagram reel video',
    ],
    [
      'instagram',
      'story',
      'video',
      [
        [1000, 10000],
        [990, 10000],
      ],
      [980, 10000],
      'between 0.1 and 10',
      '0.098',
      'Instagram story video',
    ],
    [
      'facebook',
      'reel',
      'video',
      [
        [1080, 1920],
        [1090, 1920],
        [1070, 1920],
      ],
      [1100, 1920],
      'of exactly 0.5625',
      '0.5729',
      'Facebook reel video',
    ],
    ['facebook', 'story', 'video', [[1080, 1920]], [1080, 1080], 'of exactly 0.5625', '1', 'Facebook story video'],
    [
      'linkedin',
      'post',
      'video',
      [
        [1000, 2400],
        [2400, 1000],
        [2420, 1000],
      ],
      [2450, 1000],
      'between 0.4167 and 2.4',
      '2.45',
      'LinkedIn video',
    ],
    ['linkedin', 'post', 'video', [[1000, 2420]], [1000, 2500], 'between 0.4167 and 2.4', '0.4', 'LinkedIn video'],
    [
      'threads',
      'post',
      'image',
      [
        [1000, 10000],
        [10000, 1000],
      ],
      [10200, 1000],
      'between 0.1 and 10',
      '10.2',
      'Threads post image',
    ],
    ['threads', 'post', 'video', [[100, 10000]], [98, 10000], 'between 0.01 and 10', '0.0098', 'Threads post video'],
    [
      'youtube',
      'short',
      'video',
      [
        [1080, 1920],
        [1080, 1080],
        [1090, 1080],
      ],
      [1100, 1080],
      'of at most 1',
      '1.0185',
      'YouTube short video',
    ],
    [
      'pinterest',
      'post',
      'video',
      [
        [1000, 2000],
        [1910, 1000],
      ],
      [1000, 2100],
      'between 0.5 and 1.91',
      '0.4762',
      'Pinterest post video',
    ],
  ];
  const file = (kind: 'image' | 'video', [width, height]: [number, number]): MediaFacts =>
    kind === 'image' ? image({ width, height }) : video({ width, height });

  it.each(RATIOS)('%s %s %s: bounds and tolerance pass', (platform, postType, kind, accepted) => {
    for (const size of accepted) expect(check(platform, postType, [file(kind, size)])).toBeNull();
  });

  it.each(RATIOS)('%s %s %s: %j is refused', (platform, postType, kind, _ok, refused, phrase, shown, subject) => {
    const media = file(kind, refused);
    expect(check(platform, postType, [media])).toBe(
      `${subject} allows an aspect ratio (width/height) ${phrase}; got ${shown} from ${refused[0]}x${refused[1]} (media ${media.id}, account acc_1)`,
    );
  });

  it.each([
    ['x', 'post', image({ width: 10000, height: 100 })],
    ['linkedin', 'post', image({ width: 10000, height: 100 })],
    ['bluesky', 'post', video({ width: 100, height: 10000 })],
    ['mastodon', 'post', image({ width: 10000, height: 100 })],
    ['tiktok', 'post', video({ width: 3840, height: 1000 })],
    ['youtube', 'post', video({ width: 3840, height: 1000 })],
    ['reddit', 'post', image({ width: 10000, height: 100 })],
    ['instagram', 'story', image({ width: 10000, height: 100 })],
  ] as Array<[string, PostType, MediaFacts]>)('%s %s has no ratio rule for this file', (platform, postType, media) => {
    expect(check(platform, postType, [media])).toBeNull();
  });

  it('passes files whose dimensions are unknown', () => {
    expect(check('instagram', 'post', [image({ width: null, height: null })])).toBeNull();
    expect(check('facebook', 'reel', [video({ width: 1920, height: null })])).toBeNull();
  });
});

describe('video duration', () => {
  // [platform, post type, min seconds, max seconds, subject]
  const DURATIONS: Array<[string, PostType, number | null, number, string]> = [
    ['x', 'post', 0.5, 140, 'X video'],
    ['instagram', 'post', 3, 60, 'Instagram post video'],
    ['instagram', 'reel', 3, 900, 'Instagram reel video'],
    ['instagram', 'story', 3, 60, 'Instagram story video'],
    ['facebook', 'post', null, 14400, 'Facebook post video'],
    ['facebook', 'reel', 3, 90, 'Facebook reel video'],
    ['facebook', 'story', 3, 60, 'Facebook story video'],
    ['linkedin', 'post', 3, 600, 'LinkedIn video'],
    ['threads', 'post', null, 300, 'Threads post video'],
    ['bluesky', 'post', null, 180, 'Bluesky video'],
    ['tiktok', 'post', 3, 600, 'TikTok post video'],
    ['youtube', 'post', null, 43200, 'YouTube post video'],
    ['youtube', 'short', null, 180, 'YouTube short video'],
    ['pinterest', 'post', 4, 900, 'Pinterest post video'],
  ];
  const phrase = (min: number | null, max: number): string => (min === null ? `of at most ${max}` : `between ${min} and ${max}`);
  const run = (platform: string, postType: PostType, durationMs: number): string | null => check(platform, postType, [video({ durationMs })]);

  it.each(DURATIONS)('%s %s: the bounds pass', (platform, postType, min, max) => {
    expect(run(platform, postType, max * 1000)).toBeNull();
    if (min !== null) expect(run(platform, postType, min * 1000)).toBeNull();
  });

  it.each(DURATIONS)('%s %s: 1 ms over the maximum fails', (platform, postType, min, max, subject) => {
    expect(run(platform, postType, max * 1000 + 1)).toBe(
      `${subject} allows a duration ${phrase(min, max)} seconds; got ${max + 0.001} seconds (media med_vid, account acc_1)`,
    );
  });

  it.each(DURATIONS.filter((row) => row[2] !== null))('%s %s: 1 ms under the minimum fails', (platform, postType, min, max, subject) => {
    const under = (min ?? 0) * 1000 - 1;
    expect(run(platform, postType, under)).toBe(
      `${subject} allows a duration ${phrase(min, max)} seconds; got ${under / 1000} seconds (media med_vid, account acc_1)`,
    );
  });

  it('Mastodon has no duration limit', () => {
    expect(run('mastodon', 'post', 10 * 3600 * 1000)).toBeNull();
  });

  it('passes videos whose duration is unknown', () => {
    expect(check('instagram', 'reel', [video({ durationMs: null })])).toBeNull();
  });
});
