// YouTube (Data API v3). Source: platform-limits.md "YouTube" (videos resource,
// videos.insert, Shorts help page).

import { platformFields } from '../../../../generated/platform-fields.js';
import type { PlatformRules, TextRules } from '../types.js';
import { GB, range, text, textWithout, video } from './define.js';

// The caption is the video description.
const caption: TextRules = textWithout(['<', '>'], { max: 5000, unit: 'utf8Bytes' });
const firstComment = text({ max: 10000, unit: 'utf16' });

export const youtube: PlatformRules = {
  id: 'youtube',
  displayName: 'YouTube',
  postTypes: [
    {
      postType: 'post',
      description: 'A regular video upload; the caption is the description.',
      caption,
      media: {
        minFiles: 1,
        maxFiles: 1,
        allowMixing: false,
        image: null,
        video: video({
          maxCount: 1,
          mimeTypes: ['video/*'],
          maxBytes: 256 * GB,
          // 12 h absolute; channels that are not verified are held to 15 min by YouTube.
          durationSeconds: range(null, 43200),
        }),
      },
      firstComment,
    },
    {
      postType: 'short',
      description: 'A Short: YouTube classes an upload as a Short when it is square or vertical and at most 3 minutes.',
      caption,
      media: {
        minFiles: 1,
        maxFiles: 1,
        allowMixing: false,
        image: null,
        video: video({
          maxCount: 1,
          mimeTypes: ['video/*'],
          maxBytes: 256 * GB,
          durationSeconds: range(null, 180),
          aspectRatio: range(null, 1),
        }),
      },
      firstComment,
    },
  ],
  thread: null,
  fields: platformFields.youtube,
};
