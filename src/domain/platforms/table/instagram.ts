// Instagram (professional accounts, Graph API). Source: platform-limits.md "Instagram"
// (IG User Media reference, content publishing guide).

import { platformFields } from '../../../../generated/platform-fields.js';
import type { ImageRules, PlatformRules, VideoRules } from '../types.js';
import { MB, image, range, text, video } from './define.js';

const caption = text({ max: 2200, unit: 'utf16' });
const firstComment = text({ max: 2196, unit: 'utf16' }); // 2,200 (GoHighLevel) vs 2,196 (Ayrshare): stricter taken

const feedImage: ImageRules = image({
  maxCount: 10,
  mimeTypes: ['image/jpeg'],
  maxBytes: 8 * MB,
  aspectRatio: range(0.8, 1.91), // 4:5 to 1.91:1
});

// Feed videos use the carousel-item spec (3-60 s, 100 MB, tool convention) even when a
// post has a single video, which Instagram would publish as a reel: the stricter of the
// two; a longer single video should be sent as a reel.
const feedVideo: VideoRules = video({
  maxCount: 10,
  mimeTypes: ['video/mp4', 'video/quicktime'],
  maxBytes: 100 * MB,
  durationSeconds: range(3, 60),
  aspectRatio: range(0.01, 10), // the reel range; no separate carousel-item range is published
});

export const instagram: PlatformRules = {
  id: 'instagram',
  displayName: 'Instagram',
  postTypes: [
    {
      postType: 'post',
      description: 'Feed post: 1 file is a single post, 2-10 files become a carousel.',
      caption,
      media: { minFiles: 1, maxFiles: 10, allowMixing: true, image: feedImage, video: feedVideo },
      firstComment,
    },
    {
      postType: 'carousel',
      description: 'Carousel (media_type CAROUSEL); the container needs at least 2 children.',
      caption,
      media: { minFiles: 2, maxFiles: 10, allowMixing: true, image: feedImage, video: feedVideo },
      firstComment,
    },
    {
      postType: 'reel',
      description: 'Reel (media_type REELS).',
      caption,
      media: {
        minFiles: 1,
        maxFiles: 1,
        allowMixing: false,
        image: null,
        video: video({
          maxCount: 1,
          mimeTypes: ['video/mp4', 'video/quicktime'],
          maxBytes: 300 * MB, // current reference 300 MB vs 1 GB in older revisions: stricter taken
          durationSeconds: range(3, 900),
          aspectRatio: range(0.01, 10),
        }),
      },
      firstComment,
    },
    {
      postType: 'story',
      description: 'Story (media_type STORIES): one image or video, no caption, no comments.',
      caption: null,
      media: {
        minFiles: 1,
        maxFiles: 1,
        allowMixing: false,
        image: image({ maxCount: 1, mimeTypes: ['image/jpeg'], maxBytes: 8 * MB }),
        video: video({
          maxCount: 1,
          mimeTypes: ['video/mp4', 'video/quicktime'],
          maxBytes: 100 * MB,
          durationSeconds: range(3, 60),
          aspectRatio: range(0.1, 10),
        }),
      },
      firstComment: null,
    },
  ],
  thread: null,
  fields: platformFields.instagram,
};
