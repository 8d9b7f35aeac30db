import type { LivePlatformId } from '../../domain/platforms/live.js';
import type { InstanceConsent, OAuthConsent } from '../../domain/ports/oauth.js';
import type { Publisher } from '../../domain/ports/publisher.js';
import { createBlueskyPublisher } from './bluesky/publisher.js';
import { mastodonInstanceConsent } from './mastodon/oauth.js';
import { createMastodonPublisher } from './mastodon/publisher.js';
import { createOAuthClient, type OAuthApp } from './oauth.js';
import { createLinkedInApi, linkedInOAuth } from './linkedin/api.js';
import { createLinkedInPublisher } from './linkedin/publisher.js';
import { createXApi, xOAuth } from './x/api.js';
import { createXPublisher } from './x/publisher.js';

/** Each OAuth platform's app on this server (undefined: not configured) and the origin that replaces its documented hosts. */
export interface PlatformApps {
  x: { app: OAuthApp | undefined; baseUrl: string | undefined };
  /** `version`: the LinkedIn-Version header (YYYYMM). */
  linkedin: { app: OAuthApp | undefined; baseUrl: string | undefined; version: string };
}

/**
 * The publisher of every live platform, each through the SSRF-guarded fetch, keyed by the
 * descriptors' ids (a platform described without a publisher does not compile), and the consent
 * flow of each OAuth platform whose app this server has.
 */
export function livePlatforms(
  fetch: typeof globalThis.fetch,
  apps: PlatformApps,
): {
  publishers: Record<LivePlatformId, Publisher>;
  oauth: Partial<Record<LivePlatformId, OAuthConsent>>;
  instanceOAuth: Partial<Record<LivePlatformId, InstanceConsent>>;
} {
  const x = apps.x.app === undefined ? undefined : createOAuthClient(xOAuth(createXApi(fetch, apps.x.baseUrl)), apps.x.app, { fetch, baseUrl: apps.x.baseUrl });
  const { linkedin: li } = apps;
  const linkedin =
    li.app === undefined
      ? undefined
      : createOAuthClient(linkedInOAuth(createLinkedInApi(fetch, li.baseUrl, li.version)), li.app, { fetch, baseUrl: li.baseUrl });
  const mastodon = createMastodonPublisher({ fetch });
  return {
    publishers: {
      bluesky: createBlueskyPublisher({ fetch }),
      mastodon,
      x: createXPublisher({ fetch, baseUrl: apps.x.baseUrl, oauth: x }),
      linkedin: createLinkedInPublisher({ fetch, baseUrl: li.baseUrl, version: li.version }),
    },
    oauth: { ...(x === undefined ? {} : { x: x.consent }), ...(linkedin === undefined ? {} : { linkedin: linkedin.consent }) },
    instanceOAuth: { mastodon: mastodonInstanceConsent(fetch, mastodon) },
  };
}
