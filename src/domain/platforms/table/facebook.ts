// Facebook Page. Source: platform-limits.md "Facebook Page" (Graph API, Page Stories API,
// Reels publishing guide; text and photo counts from scheduling tools).

import { platformFields } from '../../../../generated/platform-fields.js';
import type { ImageRules, MediaRules, PlatformRules } from '../types.js';
import { GB, MB, image, range, text, video } from './define.js';

// Meta publishes no number: 63,206 (Postiz, Ayrshare), 55,000 (Adobe, ContentCal),
// 16,192 (Metricool), 5,000 (Mixpost); the stricter is taken.
const caption = text({ max: 5000, unit: 'utf16' });
const firstComment = text({ max: 8000, unit: 'utf16' });

const photo: ImageRules = image({
  maxCount: 10,
  mimeTypes: ['image/jpeg', 'image/png', 'image/gif', 'image/bmp', 'image/tiff'],
  maxBytes: 4 * MB, // current doc 10 MB vs older/translated Meta text 4 MB: stricter taken
});

const feedMedia: MediaRules = {
  minFiles: 0,
  maxFiles: 10,
  allowMixing: false, // photos, or one video
  image: photo,
  video: video({
    maxCount: 1,
    mimeTypes: ['video/mp4', 'video/quicktime'],
    maxBytes: 10 * GB,
    durationSeconds: range(null, 14400), // 240 min
  }),
};

const vertical = range(0.5625, 0.5625); // 9:16

export const facebook: PlatformRules = {
  id: 'facebook',
  displayName: 'Facebook',
  postTypes: [
    { postType: 'post', description: 'Feed post: text, photos or one video.', caption, media: feedMedia, firstComment },
    {
      postType: 'reel',
      description: 'Reel (video_reels).',
      caption,
      media: {
        minFiles: 1,
        maxFiles: 1,
        allowMixing: false,
        image: null,
        video: video({ maxCount: 1, mimeTypes: ['video/mp4'], durationSeconds: range(3, 90), aspectRatio: vertical }),
      },
      firstComment,
    },
    {
      postType: 'story',
      description: 'Page story: one photo or video, no caption, no comments.',
      caption: null,
      media: {
        minFiles: 1,
        maxFiles: 1,
        allowMixing: false,
        image: { ...photo, maxCount: 1 },
        video: video({ maxCount: 1, mimeTypes: ['video/mp4'], durationSeconds: range(3, 60), aspectRatio: vertical }),
      },
      firstComment: null,
    },
    {
      postType: 'thread',
      description: 'Facebook has no reply chains: a thread is published as one feed post carrying the full text.',
      caption,
      media: feedMedia,
      firstComment,
    },
  ],
  thread: {
    style: 'single',
    description: 'One feed post; threadParts must hold exactly one element with the full text.',
    minParts: 1,
    maxParts: 1,
    part: caption,
  },
  fields: platformFields.facebook,
};
