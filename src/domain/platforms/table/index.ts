// The rules table: one module per platform. Adding a platform is a new module plus a line
// here; changing a number touches only that platform's module. A platform's `fields` are the
// exception: their source is the platform's schema in the spec (XFields … RedditFields), and the
// module takes them from generated/platform-fields.ts (npm run generate).

import type { PlatformRules } from '../types.js';
import { bluesky } from './bluesky.js';
import { facebook } from './facebook.js';
import { instagram } from './instagram.js';
import { linkedin } from './linkedin.js';
import { mastodon } from './mastodon.js';
import { pinterest } from './pinterest.js';
import { reddit } from './reddit.js';
import { threads } from './threads.js';
import { tiktok } from './tiktok.js';
import { x } from './x.js';
import { youtube } from './youtube.js';

// Frozen: the same objects are served to clients and read by the engine, so nobody may
// change a limit at runtime by accident.
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value) as unknown[]) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

export const platformRules: readonly PlatformRules[] = deepFreeze([
  x,
  instagram,
  facebook,
  linkedin,
  threads,
  bluesky,
  tiktok,
  youtube,
  pinterest,
  mastodon,
  reddit,
]);
