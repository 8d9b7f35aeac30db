// Pinterest (API v5). Source: platform-limits.md "Pinterest" (pinterest/api-description
// v5 PinCreate; media sizes from tools).

import { platformFields } from '../../../../generated/platform-fields.js';
import type { ImageRules, PlatformRules } from '../types.js';
import { GB, MB, image, range, text, video } from './define.js';

// The caption is the Pin description: the API allows 800, most tools stop at 500; stricter taken.
const caption = text({ max: 500, unit: 'utf16' });

function pinImage(maxCount: number): ImageRules {
  return image({
    maxCount,
    mimeTypes: ['image/jpeg', 'image/png', 'image/bmp', 'image/tiff', 'image/webp'],
    maxBytes: 20 * MB,
  });
}

export const pinterest: PlatformRules = {
  id: 'pinterest',
  displayName: 'Pinterest',
  postTypes: [
    {
      postType: 'post',
      description: 'An image Pin or a video Pin.',
      caption,
      media: {
        minFiles: 1,
        maxFiles: 1,
        allowMixing: false,
        image: pinImage(1),
        video: video({
          maxCount: 1,
          mimeTypes: ['video/mp4', 'video/quicktime', 'video/x-m4v'],
          maxBytes: 2 * GB,
          durationSeconds: range(4, 900),
          aspectRatio: range(0.5, 1.91), // 1:2 to 1.91:1
        }),
      },
      firstComment: null,
    },
    {
      postType: 'carousel',
      description: 'A carousel Pin of 2-5 images.',
      caption,
      media: { minFiles: 2, maxFiles: 5, allowMixing: false, image: pinImage(5), video: null },
      firstComment: null,
    },
  ],
  thread: null,
  fields: platformFields.pinterest,
};
