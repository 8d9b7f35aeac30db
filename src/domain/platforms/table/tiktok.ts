// TikTok (Content Posting API). Source: platform-limits.md "TikTok" (direct-post and
// photo-post references, media transfer guide).

import { platformFields } from '../../../../generated/platform-fields.js';
import type { PlatformRules } from '../types.js';
import { GB, MB, image, range, text, video } from './define.js';

export const tiktok: PlatformRules = {
  id: 'tiktok',
  displayName: 'TikTok',
  postTypes: [
    {
      postType: 'post',
      description: 'Video post; the caption is the video title.',
      caption: text({ max: 2200, unit: 'utf16' }),
      media: {
        minFiles: 1,
        maxFiles: 1,
        allowMixing: false,
        image: null,
        video: video({
          maxCount: 1,
          mimeTypes: ['video/mp4', 'video/webm', 'video/quicktime'],
          maxBytes: 4 * GB,
          // Minimum only from tools (L). The maximum is the API's absolute 10 min; a
          // creator's own cap (often 3 min) comes from creator_info at publish time.
          durationSeconds: range(3, 600),
        }),
      },
      firstComment: null,
    },
    {
      postType: 'carousel',
      description: 'Photo post (photo mode); the caption is the photo description.',
      caption: text({ max: 4000, unit: 'utf16' }),
      media: {
        minFiles: 1,
        maxFiles: 35,
        allowMixing: false,
        image: image({ maxCount: 35, mimeTypes: ['image/jpeg', 'image/webp'], maxBytes: 20 * MB }),
        video: null,
      },
      firstComment: null,
    },
  ],
  thread: null,
  fields: platformFields.tiktok,
};
