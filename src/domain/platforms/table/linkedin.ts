// LinkedIn (member or organization). Source: platform-limits.md "LinkedIn" (Posts,
// MultiImage and Videos APIs; commentary and comment lengths from scheduling tools).

import { platformFields } from '../../../../generated/platform-fields.js';
import type { MediaRules, PlatformRules } from '../types.js';
import { KB, MB, image, range, text, video } from './define.js';

const caption = text({ max: 3000, unit: 'utf16' });
const firstComment = text({ max: 1250, unit: 'utf16' }); // 1,250 / 3,000 / 20,000 across tools: stricter taken

const media: MediaRules = {
  minFiles: 0,
  maxFiles: 20, // 1 image, or 2-20 as a MultiImage post
  allowMixing: false, // images, or one video
  image: image({
    maxCount: 20,
    mimeTypes: ['image/jpeg', 'image/png', 'image/gif'],
    maxBytes: 5 * MB, // undocumented by the API; tools use 5 or 8 MB: stricter taken
  }),
  video: video({
    maxCount: 1,
    mimeTypes: ['video/mp4'],
    minBytes: 75 * KB,
    maxBytes: 500 * MB, // API 500 MB vs app 5 GB: stricter taken
    durationSeconds: range(3, 600), // API 30 min vs app 10-15 min: stricter taken
    aspectRatio: range(0.4167, 2.4), // 1:2.4 to 2.4:1
  }),
};

export const linkedin: PlatformRules = {
  id: 'linkedin',
  displayName: 'LinkedIn',
  postTypes: [
    { postType: 'post', description: 'A post: text, images or one video.', caption, media, firstComment },
    {
      postType: 'thread',
      description: 'LinkedIn has no reply chains: a thread is published as one post carrying the full text.',
      caption,
      media,
      firstComment,
    },
  ],
  thread: {
    style: 'single',
    description: 'One post; threadParts must hold exactly one element with the full text.',
    minParts: 1,
    maxParts: 1,
    part: caption,
  },
  fields: platformFields.linkedin,
};
