// Reddit. Source: platform-limits.md "Reddit" (/api/submit, reddit source validators;
// body, media and video from tools).

import { platformFields } from '../../../../generated/platform-fields.js';
import type { ImageRules, PlatformRules } from '../types.js';
import { GB, MB, image, range, text, video } from './define.js';

// Self-post body: 40,000 (Orshot, legacy reddit source) vs 10,000 (Postiz) and 5,000
// (Ayrshare, Upload-Post); stricter taken.
const caption = text({ max: 5000, unit: 'utf16' });
const firstComment = text({ max: 10000, unit: 'utf16' });

function picture(maxCount: number): ImageRules {
  return image({
    maxCount,
    mimeTypes: ['image/jpeg', 'image/png', 'image/gif', 'image/webp'],
    maxBytes: 10 * MB, // 20 MB (Late) vs 10 MB (Ayrshare): stricter taken
  });
}

export const reddit: PlatformRules = {
  id: 'reddit',
  displayName: 'Reddit',
  postTypes: [
    {
      postType: 'post',
      description: 'A text post, a link post (fields.url), an image post with one image, or a video post with one video.',
      caption,
      media: {
        minFiles: 0,
        maxFiles: 1,
        allowMixing: false,
        image: picture(1),
        // Through the media lease as PRAW and Postiz upload it (Ayrshare and Late do not offer
        // it); figures from Reddit's ad specs and community guides (low confidence).
        video: video({ maxCount: 1, mimeTypes: ['video/mp4', 'video/quicktime'], maxBytes: 1 * GB, durationSeconds: range(null, 900) }),
      },
      firstComment,
    },
    {
      postType: 'carousel',
      description: 'A gallery of 2-20 images.',
      caption,
      media: { minFiles: 2, maxFiles: 20, allowMixing: false, image: picture(20), video: null },
      firstComment,
    },
  ],
  thread: null,
  fields: platformFields.reddit,
};
