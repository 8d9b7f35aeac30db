// Threads (Meta). Source: platform-limits.md "Threads" (Threads Posts doc, overview).

import { platformFields } from '../../../../generated/platform-fields.js';
import type { ImageRules, MediaRules, PlatformRules, VideoRules } from '../types.js';
import { GB, MB, image, range, text, video } from './define.js';

const caption = text({ max: 500, unit: 'graphemesEmojiBytes' });

function photo(maxCount: number): ImageRules {
  return image({ maxCount, mimeTypes: ['image/jpeg', 'image/png'], maxBytes: 8 * MB, aspectRatio: range(0.1, 10) });
}

function clip(maxCount: number): VideoRules {
  return video({
    maxCount,
    mimeTypes: ['video/mp4', 'video/quicktime'],
    maxBytes: 1 * GB,
    durationSeconds: range(null, 300),
    aspectRatio: range(0.01, 10),
  });
}

const single: MediaRules = { minFiles: 0, maxFiles: 1, allowMixing: false, image: photo(1), video: clip(1) };

export const threads: PlatformRules = {
  id: 'threads',
  displayName: 'Threads',
  postTypes: [
    { postType: 'post', description: 'A post: text, one image or one video.', caption, media: single, firstComment: caption },
    {
      postType: 'carousel',
      description: 'Carousel post of 2-20 images and videos.',
      caption,
      media: { minFiles: 2, maxFiles: 20, allowMixing: true, image: photo(20), video: clip(20) },
      firstComment: caption,
    },
    {
      postType: 'thread',
      description: 'A reply chain; the media go on the first part. Without threadParts the caption is a one-part thread.',
      caption,
      media: single,
      firstComment: caption,
    },
  ],
  thread: {
    style: 'chain',
    description: 'Each part is a post replying to the previous one.',
    minParts: 1,
    maxParts: 80, // Threads publishes no maximum; product cap (Metricool's 80)
    part: caption,
  },
  fields: platformFields.threads,
};
