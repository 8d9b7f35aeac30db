import type { LivePlatformId } from '../../domain/platforms/live.js';
import type { InstanceConsent, OAuthConsent } from '../../domain/ports/oauth.js';
import type { Publisher } from '../../domain/ports/publisher.js';
import { assertUrlAllowed } from '../net/guarded-fetch.js';
import { createBlueskyPublisher } from './bluesky/publisher.js';
import { mastodonInstanceConsent } from './mastodon/oauth.js';
import { createMastodonPublisher } from './mastodon/publisher.js';
import { createFacebookPublisher, facebookConsent } from './meta/facebook.js';
import { createInstagramPublisher, instagramConsent } from './meta/instagram.js';
import { createThreadsPublisher, threadsConsent } from './meta/threads.js';
import { createOAuthClient, type OAuthApp } from './oauth.js';
import { createPinterestApi, pinterestOAuth } from './pinterest/api.js';
import { createPinterestPublisher } from './pinterest/publisher.js';
import { createLinkedInApi, linkedInOAuth } from './linkedin/api.js';
import { createLinkedInPublisher } from './linkedin/publisher.js';
import { createRedditApi, redditOAuth, withUserAgent } from './reddit/api.js';
import { createRedditPublisher } from './reddit/publisher.js';
import { tiktokOAuth } from './tiktok/api.js';
import { createTikTokPublisher } from './tiktok/publisher.js';
import { createXApi, xOAuth } from './x/api.js';
import { createYouTubeApi, youTubeOAuth } from './youtube/api.js';
import { createYouTubePublisher } from './youtube/publisher.js';
import { createXPublisher } from './x/publisher.js';

/** Each OAuth platform's app on this server (undefined: not configured) and the origin that replaces its documented hosts. */
export interface PlatformApps {
  x: { app: OAuthApp | undefined; baseUrl: string | undefined };
  /** `version`: the LinkedIn-Version header (YYYYMM). */
  linkedin: { app: OAuthApp | undefined; baseUrl: string | undefined; version: string };
  /** `version`: the Graph API version (`v25.0`). */
  instagram: { app: OAuthApp | undefined; baseUrl: string | undefined; version: string };
  facebook: { app: OAuthApp | undefined; baseUrl: string | undefined; version: string };
  threads: { app: OAuthApp | undefined; baseUrl: string | undefined };
  pinterest: { app: OAuthApp | undefined; baseUrl: string | undefined };
  youtube: { app: OAuthApp | undefined; baseUrl: string | undefined };
  /** The app's client key and secret (TikTok calls the client id its client key). */
  tiktok: { app: OAuthApp | undefined; baseUrl: string | undefined };
  /** `username`: the developer's Reddit account, named in every call's User-Agent (required with `app`). */
  reddit: { app: OAuthApp | undefined; baseUrl: string | undefined; username: string | undefined };
}

/**
 * The publisher of every live platform, each through the SSRF-guarded fetch, keyed by the
 * descriptors' ids (a platform described without a publisher does not compile), and the consent
 * flow of each OAuth platform whose app this server has.
 */
export function livePlatforms(
  fetch: typeof globalThis.fetch,
  apps: PlatformApps,
  network: { allowPrivateNetwork: boolean },
): {
  publishers: Record<LivePlatformId, Publisher>;
  oauth: Partial<Record<LivePlatformId, OAuthConsent>>;
  instanceOAuth: Partial<Record<LivePlatformId, InstanceConsent>>;
} {
  const x = apps.x.app === undefined ? undefined : createOAuthClient(xOAuth(createXApi(fetch, apps.x.baseUrl)), apps.x.app, { fetch, baseUrl: apps.x.baseUrl });
  const { linkedin: li, instagram: ig, facebook: fb, threads: th } = apps;
  const linkedin =
    li.app === undefined
      ? undefined
      : createOAuthClient(linkedInOAuth(createLinkedInApi(fetch, li.baseUrl, li.version)), li.app, { fetch, baseUrl: li.baseUrl });
  const { pinterest: pi } = apps;
  const pinterest =
    pi.app === undefined ? undefined : createOAuthClient(pinterestOAuth(createPinterestApi(fetch, pi.baseUrl)), pi.app, { fetch, baseUrl: pi.baseUrl });
  const { youtube: yt } = apps;
  const youtube =
    yt.app === undefined ? undefined : createOAuthClient(youTubeOAuth(createYouTubeApi(fetch, yt.baseUrl)), yt.app, { fetch, baseUrl: yt.baseUrl });
  const { tiktok: tk } = apps;
  const tiktok = tk.app === undefined ? undefined : tiktokOAuth(fetch, tk.baseUrl, tk.app);
  const { reddit: rd } = apps;
  // Reddit throttles generic user agents: its calls name the app.
  const redditFetch = withUserAgent(fetch, rd.app?.clientId ?? 'unconfigured', rd.username);
  const reddit =
    rd.app === undefined
      ? undefined
      : createOAuthClient(redditOAuth(createRedditApi(redditFetch, rd.baseUrl)), rd.app, { fetch: redditFetch, baseUrl: rd.baseUrl });
  const mastodon = createMastodonPublisher({ fetch });
  const publicUrlProblem = (url: string) => publicUrlProblemOf(url, network.allowPrivateNetwork);
  const consents: Partial<Record<LivePlatformId, OAuthConsent>> = {
    ...(x === undefined ? {} : { x: x.consent }),
    ...(linkedin === undefined ? {} : { linkedin: linkedin.consent }),
    ...(ig.app === undefined ? {} : { instagram: instagramConsent({ fetch, ...ig, app: ig.app, publicUrlProblem }) }),
    ...(fb.app === undefined ? {} : { facebook: facebookConsent({ fetch, ...fb, app: fb.app }) }),
    ...(th.app === undefined ? {} : { threads: threadsConsent({ fetch, ...th, app: th.app, publicUrlProblem }) }),
    ...(pinterest === undefined ? {} : { pinterest: pinterest.consent }),
    ...(youtube === undefined ? {} : { youtube: youtube.consent }),
    ...(tiktok === undefined ? {} : { tiktok: tiktok.consent }),
    ...(reddit === undefined ? {} : { reddit: reddit.consent }),
  };
  return {
    publishers: {
      bluesky: createBlueskyPublisher({ fetch }),
      mastodon,
      x: createXPublisher({ fetch, baseUrl: apps.x.baseUrl, oauth: x }),
      linkedin: createLinkedInPublisher({ fetch, baseUrl: li.baseUrl, version: li.version }),
      instagram: createInstagramPublisher({ fetch, ...ig, publicUrlProblem }),
      facebook: createFacebookPublisher({ fetch, ...fb }),
      threads: createThreadsPublisher({ fetch, ...th, publicUrlProblem }),
      pinterest: createPinterestPublisher({ fetch, baseUrl: pi.baseUrl, oauth: pinterest, publicUrlProblem }),
      youtube: createYouTubePublisher({ fetch, baseUrl: yt.baseUrl, oauth: youtube }),
      tiktok: createTikTokPublisher({ fetch, baseUrl: tk.baseUrl, oauth: tiktok, publicUrlProblem }),
      reddit: createRedditPublisher({ fetch: redditFetch, baseUrl: rd.baseUrl, oauth: reddit }),
    },
    oauth: consents,
    instanceOAuth: { mastodon: mastodonInstanceConsent(fetch, mastodon) },
  };
}

/**
 * Why a platform's crawler (Meta's, Pinterest's) could not fetch a public media URL of this
 * server: only https on a public host is reachable from outside (http and private addresses only where the operator allows private
 * networks, as the tests do with their fakes).
 */
function publicUrlProblemOf(url: string, allowPrivateNetwork: boolean): string | null {
  try {
    assertUrlAllowed(url, allowPrivateNetwork);
  } catch (error) {
    return `HERALD_PUBLIC_URL must be a public https address (${error instanceof Error ? error.message : 'not allowed'})`;
  }
  const host = new URL(url).hostname;
  if (!allowPrivateNetwork && (host === 'localhost' || host.endsWith('.localhost') || !host.includes('.')))
    return `HERALD_PUBLIC_URL must be a public https address, not ${host}`;
  return null;
}
