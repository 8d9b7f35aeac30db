// X (Twitter). Source: platform-limits.md "X (Twitter)" (docs.x.com counting-characters,
// media best practices, X OpenAPI CreatePostsRequest).

import { platformFields } from '../../../../generated/platform-fields.js';
import type { MediaRules, PlatformRules } from '../types.js';
import { MB, image, range, text, video } from './define.js';

const caption = text({ max: 280, unit: 'weighted' }); // non-Premium; Premium caps are per account

const media: MediaRules = {
  minFiles: 0,
  maxFiles: 4,
  allowMixing: false,
  image: image({
    maxCount: 4,
    mimeTypes: ['image/jpeg', 'image/png', 'image/gif', 'image/webp'],
    maxBytes: 5 * MB,
    // An animated GIF has its own cap and cannot share the post with other media.
    mimeOverrides: [{ mimeType: 'image/gif', maxBytes: 15 * MB, onlyFile: true }],
  }),
  video: video({
    maxCount: 1,
    mimeTypes: ['video/mp4', 'video/quicktime'],
    maxBytes: 512 * MB, // a newer doc revision says 8 GB; stricter published value taken
    durationSeconds: range(0.5, 140), // a newer doc revision says 20 min; stricter taken
    aspectRatio: range(0.3333, 3), // 1:3 to 3:1
  }),
};

export const x: PlatformRules = {
  id: 'x',
  displayName: 'X',
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
    maxParts: 80, // X publishes no maximum; product cap (Metricool's 80)
    part: caption,
  },
  fields: platformFields.x,
};
