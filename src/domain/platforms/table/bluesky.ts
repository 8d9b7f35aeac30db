// Bluesky (AT Protocol, app.bsky). Source: platform-limits.md "Bluesky" (lexicons
// feed/post.json, embed/images.json, embed/video.json).

import { platformFields } from '../../../../generated/platform-fields.js';
import type { MediaRules, PlatformRules } from '../types.js';
import { image, range, text, video } from './define.js';

const caption = text({ max: 300, unit: 'graphemes' }, { max: 3000, unit: 'utf8Bytes' });

const media: MediaRules = {
  minFiles: 0,
  maxFiles: 4,
  allowMixing: false, // one embed per post: images or a video
  image: image({
    maxCount: 4,
    mimeTypes: ['image/jpeg', 'image/png', 'image/webp'], // lexicon says image/*; these are what servers take
    maxBytes: 1_000_000, // lexicon 2,000,000 since Apr 2026, many servers and clients still 1,000,000: stricter taken
  }),
  video: video({
    maxCount: 1,
    mimeTypes: ['video/mp4', 'video/quicktime', 'video/webm', 'video/mpeg'],
    maxBytes: 100_000_000, // lexicon 300,000,000 since Aug 2026, older servers 100,000,000: stricter taken
    durationSeconds: range(null, 180),
  }),
};

export const bluesky: PlatformRules = {
  id: 'bluesky',
  displayName: 'Bluesky',
  postTypes: [
    { postType: 'post', description: 'A post.', caption, media, firstComment: caption },
    {
      postType: 'thread',
      description: 'A reply chain; the media go on the first part. Without threadParts the caption is a one-part thread.',
      caption,
      media,
      firstComment: caption,
    },
  ],
  thread: {
    style: 'chain',
    description: 'Each part is a post replying to the previous one.',
    minParts: 1,
    maxParts: 80, // Bluesky has no maximum; product cap (Metricool's 80)
    part: caption,
  },
  fields: platformFields.bluesky,
};
