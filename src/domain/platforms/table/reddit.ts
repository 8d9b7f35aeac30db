// Reddit. Source: platform-limits.md "Reddit" (/api/submit, reddit source validators;
// body, media and video from tools).

import { platformFields } from '../../../../generated/platform-fields.js';
import type { ImageRules, PlatformRules } from '../types.js';
import { MB, image, text } from './define.js';

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
      // Video through the API: Postiz uploads it, Ayrshare and Late say third-party apps
      // cannot; stricter taken, so no video.
      description: 'A text post, or an image post with one image.',
      caption,
      media: { minFiles: 0, maxFiles: 1, allowMixing: false, image: picture(1), video: null },
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
