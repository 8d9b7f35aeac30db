// Mastodon, default instance values. Source: platform-limits.md "Mastodon" (Instance
// entity, StatusLengthValidator, PostStatusService). Instances can change all of these.

import { platformFields } from '../../../../generated/platform-fields.js';
import type { MediaRules, PlatformRules } from '../types.js';
import { image, text, video } from './define.js';

const caption = text({ max: 500, unit: 'graphemesUrl23' });

const media: MediaRules = {
  minFiles: 0,
  maxFiles: 4,
  allowMixing: false, // up to 4 images, or one video
  image: image({
    maxCount: 4,
    mimeTypes: ['image/jpeg', 'image/png', 'image/gif', 'image/heic', 'image/heif', 'image/webp', 'image/avif'],
    maxBytes: 16_777_216,
  }),
  video: video({ maxCount: 1, mimeTypes: ['video/webm', 'video/mp4', 'video/quicktime'], maxBytes: 103_809_024 }),
};

export const mastodon: PlatformRules = {
  id: 'mastodon',
  displayName: 'Mastodon',
  postTypes: [
    { postType: 'post', description: 'A status.', caption, media, firstComment: caption },
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
    description: 'Each part is a status replying to the previous one.',
    minParts: 1,
    maxParts: 80, // Mastodon has no maximum; product cap (Metricool's 80)
    part: caption,
  },
  fields: platformFields.mastodon,
};
