import { createBlueskyPublisher } from '../publishers/bluesky/publisher.js';
import { createMastodonPublisher } from '../publishers/mastodon/publisher.js';
import type { Publisher } from '../publishers/publisher.js';

/** The platforms Herald publishes to for real, each through the SSRF-guarded fetch. */
export function livePublishers(fetch: typeof globalThis.fetch): Record<string, Publisher> {
  return {
    bluesky: createBlueskyPublisher({ fetch }),
    mastodon: createMastodonPublisher({ fetch }),
  };
}
