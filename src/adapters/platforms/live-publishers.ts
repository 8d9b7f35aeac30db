import type { LivePlatformId } from '../../domain/platforms/live.js';
import { createBlueskyPublisher } from './bluesky/publisher.js';
import { createMastodonPublisher } from './mastodon/publisher.js';
import type { Publisher } from '../../domain/ports/publisher.js';

/**
 * The publisher of every live platform, each through the SSRF-guarded fetch; keyed by the
 * descriptors' ids, so a platform described without a publisher does not compile.
 */
export function livePublishers(fetch: typeof globalThis.fetch): Record<LivePlatformId, Publisher> {
  return {
    bluesky: createBlueskyPublisher({ fetch }),
    mastodon: createMastodonPublisher({ fetch }),
  };
}
