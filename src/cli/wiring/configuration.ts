import { resolve } from 'node:path';
import envSchema from 'env-schema';
import type { PlatformApps } from '../../adapters/platforms/live-publishers.js';
import type { OAuthApp } from '../../adapters/platforms/oauth.js';
import { s3LocationOf, type S3Location } from '../../adapters/storage/s3-location.js';

/**
 * Every variable the service reads, with its type, bounds and default: the one place a default is
 * defined. README.md's configuration table lists the same names and defaults (a test holds them
 * together), and nothing outside this file reads `process.env` (a lint rule holds that).
 */
export const CONFIGURATION = {
  type: 'object',
  properties: {
    DATABASE_URL: { type: 'string', description: 'A PostgreSQL connection string; unset: the embedded PostgreSQL in HERALD_DATA_DIR' },
    HERALD_DATA_DIR: { type: 'string', default: './.herald' },
    PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 3000 },
    HOST: { type: 'string', default: '127.0.0.1' },
    // Unset: this machine at PORT, which only local clients reach.
    HERALD_PUBLIC_URL: { type: 'string' },
    // Comma-separated origins (https://app.example.com) a connection's returnUrl may point to; unset: none.
    HERALD_RETURN_URL_ORIGINS: { type: 'string' },
    HERALD_MIGRATE_ON_START: { type: 'boolean', default: false },
    HERALD_DEMO_ON_FIRST_START: { type: 'boolean', default: false },
    HERALD_MAX_UPLOAD_BYTES: { type: 'integer', minimum: 1, default: 512 * 1024 * 1024 },
    // Unset: the data folder's media/. The store's endpoint, region and keys are the standard AWS variables, which the SDK reads itself.
    HERALD_MEDIA_URL: { type: 'string' },
    HERALD_S3_FORCE_PATH_STYLE: { type: 'boolean', default: false },
    HERALD_SECRET_KEY: { type: 'string' },
    HERALD_ALLOW_PRIVATE_NETWORK: { type: 'boolean', default: false },
    HERALD_WORKER: { type: 'boolean', default: true },
    HERALD_WORKER_CONCURRENCY: { type: 'integer', minimum: 1, default: 4 },
    HERALD_MAX_LATENESS_SECONDS: { type: 'integer', minimum: 1, default: 3600 },
    HERALD_PUBLISH_LEASE_SECONDS: { type: 'integer', minimum: 1, default: 300 },
    HERALD_PUBLISH_TIMEOUT_SECONDS: { type: 'integer', minimum: 1, default: 900 },
    HERALD_RETRY_BASE_MS: { type: 'integer', minimum: 1, default: 30_000 },
    HERALD_LIVE_SPACING_MS: { type: 'integer', minimum: 0, default: 1000 },
    // Unset: each platform's own pace.
    HERALD_POLL_INTERVAL_MS: { type: 'integer', minimum: 1 },
    HERALD_WEBHOOK_TIMEOUT_MS: { type: 'integer', minimum: 1, default: 10_000 },
    HERALD_WEBHOOK_RETRY_BASE_MS: { type: 'integer', minimum: 1, default: 10_000 },
    HERALD_EVENT_RETENTION_DAYS: { type: 'integer', minimum: 1, default: 30 },
    LOG_LEVEL: { type: 'string', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
    HERALD_RATE_LIMIT_PER_MINUTE: { type: 'integer', minimum: 1, default: 600 },
    HERALD_RATE_LIMIT_WRITES_PER_MINUTE: { type: 'integer', minimum: 1, default: 120 },
    HERALD_RATE_LIMIT_ANONYMOUS_PER_MINUTE: { type: 'integer', minimum: 1, default: 60 },
    HERALD_RATE_LIMIT_CONSENT_PER_MINUTE: { type: 'integer', minimum: 1, default: 300 },
    REDIS_URL: { type: 'string' },
    HERALD_TRUST_PROXY: { type: 'string', default: 'false' },
    // A platform's app, for accounts that connect through its consent page; unset: not offered.
    HERALD_X_CLIENT_ID: { type: 'string' },
    HERALD_X_CLIENT_SECRET: { type: 'string' },
    // Replaces the origin of every documented host of the platform (tests reach fakes, operators a proxy).
    HERALD_X_BASE_URL: { type: 'string', pattern: '^https?://[^/?#]+$' },
    HERALD_LINKEDIN_CLIENT_ID: { type: 'string' },
    HERALD_LINKEDIN_CLIENT_SECRET: { type: 'string' },
    HERALD_LINKEDIN_BASE_URL: { type: 'string', pattern: '^https?://[^/?#]+$' },
    // LinkedIn's monthly API version (YYYYMM); each is served for at least a year, then answered 426.
    HERALD_LINKEDIN_VERSION: { type: 'string', pattern: '^[0-9]{6}$', default: '202610' },
    HERALD_INSTAGRAM_CLIENT_ID: { type: 'string' },
    HERALD_INSTAGRAM_CLIENT_SECRET: { type: 'string' },
    HERALD_INSTAGRAM_BASE_URL: { type: 'string', pattern: '^https?://[^/?#]+$' },
    HERALD_FACEBOOK_CLIENT_ID: { type: 'string' },
    HERALD_FACEBOOK_CLIENT_SECRET: { type: 'string' },
    HERALD_FACEBOOK_BASE_URL: { type: 'string', pattern: '^https?://[^/?#]+$' },
    HERALD_THREADS_CLIENT_ID: { type: 'string' },
    HERALD_THREADS_CLIENT_SECRET: { type: 'string' },
    HERALD_THREADS_BASE_URL: { type: 'string', pattern: '^https?://[^/?#]+$' },
    HERALD_PINTEREST_CLIENT_ID: { type: 'string' },
    HERALD_PINTEREST_CLIENT_SECRET: { type: 'string' },
    HERALD_PINTEREST_BASE_URL: { type: 'string', pattern: '^https?://[^/?#]+$' },
    HERALD_YOUTUBE_CLIENT_ID: { type: 'string' },
    HERALD_YOUTUBE_CLIENT_SECRET: { type: 'string' },
    HERALD_YOUTUBE_BASE_URL: { type: 'string', pattern: '^https?://[^/?#]+$' },
    HERALD_TIKTOK_CLIENT_ID: { type: 'string' },
    HERALD_TIKTOK_CLIENT_SECRET: { type: 'string' },
    HERALD_TIKTOK_BASE_URL: { type: 'string', pattern: '^https?://[^/?#]+$' },
    HERALD_REDDIT_CLIENT_ID: { type: 'string' },
    HERALD_REDDIT_CLIENT_SECRET: { type: 'string' },
    HERALD_REDDIT_BASE_URL: { type: 'string', pattern: '^https?://[^/?#]+$' },
    // Reddit's API rules: the user agent names the developer's Reddit account (3 to 20 letters, digits, - and _).
    HERALD_REDDIT_USERNAME: { type: 'string', pattern: '^[A-Za-z0-9_-]{3,20}$' },
    // The Graph API version of Instagram and Facebook calls; Meta serves each for about two years.
    HERALD_META_GRAPH_VERSION: { type: 'string', pattern: '^v[0-9]+\\.[0-9]+$', default: 'v25.0' },
  },
} as const;

type Properties = typeof CONFIGURATION.properties;
type Variable = keyof Properties;
type ValueOf<P> = P extends { type: 'integer' } ? number : P extends { type: 'boolean' } ? boolean : string;
/** The variables as read: those with a default are always there. */
type Variables = { [K in Variable]: Properties[K] extends { default: unknown } ? ValueOf<Properties[K]> : ValueOf<Properties[K]> | undefined };

/** The configuration of one process, read from its environment. */
export interface Environment {
  /** Postgres connection string; without it the embedded database in dataDir is used. */
  databaseUrl: string | undefined;
  dataDir: string;
  host: string;
  port: number;
  /** Where platforms and browsers reach this service from outside (public media URLs are made on it). */
  publicUrl: string;
  /** The origins a connection's returnUrl may point to; empty: none. */
  returnUrlOrigins: string[];
  migrateOnStart: boolean;
  demoOnFirstStart: boolean;
  logLevel: string;
  /** The largest media upload accepted, in bytes. */
  maxUploadBytes: number;
  /** The bucket (and key prefix) media files live in; undefined: the data folder's `media/`. */
  mediaStore: S3Location | undefined;
  /** Reach the bucket as `endpoint/bucket/key` rather than `bucket.endpoint/key`, as most self-hosted stores want. */
  s3ForcePathStyle: boolean;
  /** The key that seals stored credentials (base64 or hex, 32 bytes); without it, a key file in dataDir. */
  secretKey: string | undefined;
  /** Lets user-given URLs (a Mastodon instance, a Bluesky PDS) use http and private or loopback addresses. */
  allowPrivateNetwork: boolean;
  /** Whether `herald serve` also runs a publishing worker in its own process. */
  inProcessWorker: boolean;
  /** How many posts one worker process publishes at a time. */
  workerConcurrency: number;
  publishing: {
    leaseMs: number;
    publishTimeoutMs: number;
    maxLatenessMs: number;
    backoffBaseMs: number;
    liveSpacingMs: number;
    /** Overrides every platform's pace of looking again at work it is still doing (tests); null: the platforms' own. */
    pollIntervalMs: number | null;
  };
  rateLimits: {
    perKeyPerMinute: number;
    writesPerKeyPerMinute: number;
    perAddressPerMinute: number;
    consentPerAddressPerMinute: number;
  };
  /** Where every process counts requests against the rate limits; unset: each process in memory. */
  redisUrl: string | undefined;
  /** Fastify's trustProxy: false, true, or a comma-separated list of proxy addresses or CIDR ranges. */
  trustProxy: boolean | string;
  webhooks: {
    timeoutMs: number;
    retryBaseMs: number;
    eventRetentionDays: number;
  };
  /** Each OAuth platform's app on this server (undefined: not configured) and the origin its hosts are reached at (undefined: the documented ones). */
  platforms: PlatformApps;
}

export function readEnvironment(env: NodeJS.ProcessEnv = process.env): Environment {
  const v = readVariables(env);
  return {
    databaseUrl: v.DATABASE_URL,
    dataDir: resolve(v.HERALD_DATA_DIR),
    host: v.HOST,
    port: v.PORT,
    publicUrl: publicUrl(v.HERALD_PUBLIC_URL, v.PORT),
    returnUrlOrigins: returnUrlOrigins(v.HERALD_RETURN_URL_ORIGINS ?? ''),
    migrateOnStart: v.HERALD_MIGRATE_ON_START,
    demoOnFirstStart: v.HERALD_DEMO_ON_FIRST_START,
    logLevel: v.LOG_LEVEL,
    maxUploadBytes: v.HERALD_MAX_UPLOAD_BYTES,
    mediaStore: mediaStore(v.HERALD_MEDIA_URL),
    s3ForcePathStyle: v.HERALD_S3_FORCE_PATH_STYLE,
    secretKey: v.HERALD_SECRET_KEY,
    allowPrivateNetwork: v.HERALD_ALLOW_PRIVATE_NETWORK,
    inProcessWorker: v.HERALD_WORKER,
    workerConcurrency: v.HERALD_WORKER_CONCURRENCY,
    publishing: {
      leaseMs: 1000 * v.HERALD_PUBLISH_LEASE_SECONDS,
      publishTimeoutMs: 1000 * v.HERALD_PUBLISH_TIMEOUT_SECONDS,
      maxLatenessMs: 1000 * v.HERALD_MAX_LATENESS_SECONDS,
      backoffBaseMs: v.HERALD_RETRY_BASE_MS,
      liveSpacingMs: v.HERALD_LIVE_SPACING_MS,
      pollIntervalMs: v.HERALD_POLL_INTERVAL_MS ?? null,
    },
    rateLimits: {
      perKeyPerMinute: v.HERALD_RATE_LIMIT_PER_MINUTE,
      writesPerKeyPerMinute: v.HERALD_RATE_LIMIT_WRITES_PER_MINUTE,
      perAddressPerMinute: v.HERALD_RATE_LIMIT_ANONYMOUS_PER_MINUTE,
      consentPerAddressPerMinute: v.HERALD_RATE_LIMIT_CONSENT_PER_MINUTE,
    },
    redisUrl: v.REDIS_URL,
    trustProxy: trustProxy(v.HERALD_TRUST_PROXY),
    webhooks: {
      timeoutMs: v.HERALD_WEBHOOK_TIMEOUT_MS,
      retryBaseMs: v.HERALD_WEBHOOK_RETRY_BASE_MS,
      eventRetentionDays: v.HERALD_EVENT_RETENTION_DAYS,
    },
    platforms: {
      x: { app: oauthApp('X', v.HERALD_X_CLIENT_ID, v.HERALD_X_CLIENT_SECRET), baseUrl: v.HERALD_X_BASE_URL },
      linkedin: {
        app: oauthApp('LINKEDIN', v.HERALD_LINKEDIN_CLIENT_ID, v.HERALD_LINKEDIN_CLIENT_SECRET),
        baseUrl: v.HERALD_LINKEDIN_BASE_URL,
        version: v.HERALD_LINKEDIN_VERSION,
      },
      instagram: {
        app: oauthApp('INSTAGRAM', v.HERALD_INSTAGRAM_CLIENT_ID, v.HERALD_INSTAGRAM_CLIENT_SECRET),
        baseUrl: v.HERALD_INSTAGRAM_BASE_URL,
        version: v.HERALD_META_GRAPH_VERSION,
      },
      facebook: {
        app: oauthApp('FACEBOOK', v.HERALD_FACEBOOK_CLIENT_ID, v.HERALD_FACEBOOK_CLIENT_SECRET),
        baseUrl: v.HERALD_FACEBOOK_BASE_URL,
        version: v.HERALD_META_GRAPH_VERSION,
      },
      threads: { app: oauthApp('THREADS', v.HERALD_THREADS_CLIENT_ID, v.HERALD_THREADS_CLIENT_SECRET), baseUrl: v.HERALD_THREADS_BASE_URL },
      pinterest: { app: oauthApp('PINTEREST', v.HERALD_PINTEREST_CLIENT_ID, v.HERALD_PINTEREST_CLIENT_SECRET), baseUrl: v.HERALD_PINTEREST_BASE_URL },
      youtube: { app: oauthApp('YOUTUBE', v.HERALD_YOUTUBE_CLIENT_ID, v.HERALD_YOUTUBE_CLIENT_SECRET), baseUrl: v.HERALD_YOUTUBE_BASE_URL },
      tiktok: { app: oauthApp('TIKTOK', v.HERALD_TIKTOK_CLIENT_ID, v.HERALD_TIKTOK_CLIENT_SECRET), baseUrl: v.HERALD_TIKTOK_BASE_URL },
      reddit: redditApp(v),
    },
  };
}

/** Reddit's app, with the developer's Reddit username its API rules ask every user agent to name. */
function redditApp(v: Variables): PlatformApps['reddit'] {
  const app = oauthApp('REDDIT', v.HERALD_REDDIT_CLIENT_ID, v.HERALD_REDDIT_CLIENT_SECRET);
  if (app !== undefined && v.HERALD_REDDIT_USERNAME === undefined)
    throw new Error(
      "HERALD_REDDIT_USERNAME must be set with HERALD_REDDIT_CLIENT_ID: Reddit's API rules ask every call's User-Agent to name the developer's Reddit account",
    );
  return { app, baseUrl: v.HERALD_REDDIT_BASE_URL, username: v.HERALD_REDDIT_USERNAME };
}

function oauthApp(platform: string, clientId: string | undefined, clientSecret: string | undefined): OAuthApp | undefined {
  if (clientId === undefined && clientSecret === undefined) return undefined;
  if (clientId === undefined || clientSecret === undefined)
    throw new Error(`HERALD_${platform}_CLIENT_ID and HERALD_${platform}_CLIENT_SECRET are set together or not at all`);
  return { clientId, clientSecret };
}

/**
 * The table's variables from `env`, validated and with their defaults. A blank value counts as
 * unset, and a flag also takes 1 and 0 in any case; a value the table refuses is one error naming
 * each variable, what it must be and what it was.
 */
function readVariables(env: NodeJS.ProcessEnv): Variables {
  const given: Record<string, string> = {};
  for (const name of Object.keys(CONFIGURATION.properties) as Variable[]) {
    const value = env[name];
    if (value === undefined || value.trim() === '') continue;
    given[name] = CONFIGURATION.properties[name].type === 'boolean' ? flag(value) : value;
  }
  try {
    return envSchema<Variables>({ schema: structuredClone(CONFIGURATION) as object, data: given, env: false });
  } catch (err) {
    const errors = (err as { errors?: { instancePath: string; message?: string }[] }).errors ?? [];
    const problems = errors.map(({ instancePath, message }) => {
      const name = instancePath.slice(1);
      return `${name} ${message ?? 'is invalid'}, got ${given[name] ?? 'nothing'}`;
    });
    throw new Error(problems.length > 0 ? problems.join('; ') : 'The environment is invalid');
  }
}

function flag(value: string): string {
  const v = value.trim().toLowerCase();
  return v === '1' ? 'true' : v === '0' ? 'false' : v;
}

/** An absolute http(s) URL without query or fragment; unset: this machine at PORT. */
function publicUrl(given: string | undefined, listenPort: number): string {
  if (given === undefined) return `http://127.0.0.1:${listenPort}`;
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new Error(`HERALD_PUBLIC_URL must be an absolute http or https URL, got ${given}`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.search !== '' || url.hash !== '' || url.username !== '') {
    throw new Error(`HERALD_PUBLIC_URL must be an http or https URL without query, fragment or credentials, got ${given}`);
  }
  return given.replace(/\/+$/, '');
}

/** Each listed origin as `new URL(…).origin` spells it; an entry that is not a bare http(s) origin is refused. */
function returnUrlOrigins(given: string): string[] {
  return given
    .split(',')
    .map((one) => one.trim())
    .filter((one) => one !== '')
    .map((one) => {
      let url: URL | undefined;
      try {
        url = new URL(one);
      } catch {
        // Refused below.
      }
      if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== one.replace(/\/$/, '').toLowerCase())
        throw new Error(`HERALD_RETURN_URL_ORIGINS must list origins such as https://app.example.com (scheme, host, port; no path), got ${one}`);
      return url.origin;
    });
}

function mediaStore(given: string | undefined): S3Location | undefined {
  if (given === undefined) return undefined;
  const location = s3LocationOf(given.trim());
  if (location === undefined) throw new Error(`HERALD_MEDIA_URL must be s3://bucket or s3://bucket/prefix (unset: the data folder), got ${given}`);
  return location;
}

function trustProxy(value: string): boolean | string {
  const v = value.trim();
  if (v.toLowerCase() === 'false') return false;
  return v.toLowerCase() === 'true' ? true : v;
}
