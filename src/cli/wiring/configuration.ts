import { resolve } from 'node:path';

/** Everything the service reads from its environment; README.md lists the same variables. */
export interface Environment {
  /** Postgres connection string; without it the embedded database in dataDir is used. */
  databaseUrl: string | undefined;
  dataDir: string;
  host: string;
  port: number;
  /** Where platforms and browsers reach this service from outside (public media URLs are made on it). */
  publicUrl: string;
  migrateOnStart: boolean;
  demoOnFirstStart: boolean;
  logLevel: string;
  /** The largest media upload accepted, in bytes. */
  maxUploadBytes: number;
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
  };
  /** Where every process counts requests against the rate limits; unset: each process in memory. */
  redisUrl: string | undefined;
  /** Fastify's trustProxy: false, true, or a comma-separated list of proxy addresses or CIDR ranges. */
  trustProxy: boolean | string;
  webhooks: {
    /** How long a webhook endpoint has to answer one request. */
    timeoutMs: number;
    /** The wait after a webhook's first failed attempt; each next one is five times longer. */
    retryBaseMs: number;
    /** How long webhook events, their deliveries and attempts are kept, in days. */
    eventRetentionDays: number;
  };
}

export function readEnvironment(env: NodeJS.ProcessEnv = process.env): Environment {
  return {
    databaseUrl: nonEmpty(env.DATABASE_URL),
    dataDir: resolve(nonEmpty(env.HERALD_DATA_DIR) ?? '.herald'),
    host: nonEmpty(env.HOST) ?? '127.0.0.1',
    port: port(env.PORT),
    publicUrl: publicUrl(env.HERALD_PUBLIC_URL, port(env.PORT)),
    migrateOnStart: flag('HERALD_MIGRATE_ON_START', env.HERALD_MIGRATE_ON_START),
    demoOnFirstStart: flag('HERALD_DEMO_ON_FIRST_START', env.HERALD_DEMO_ON_FIRST_START),
    logLevel: nonEmpty(env.LOG_LEVEL) ?? 'info',
    maxUploadBytes: positiveInteger('HERALD_MAX_UPLOAD_BYTES', env.HERALD_MAX_UPLOAD_BYTES, 512 * 1024 * 1024),
    secretKey: nonEmpty(env.HERALD_SECRET_KEY),
    allowPrivateNetwork: flag('HERALD_ALLOW_PRIVATE_NETWORK', env.HERALD_ALLOW_PRIVATE_NETWORK),
    inProcessWorker: env.HERALD_WORKER === undefined ? true : flag('HERALD_WORKER', env.HERALD_WORKER),
    workerConcurrency: positiveInteger('HERALD_WORKER_CONCURRENCY', env.HERALD_WORKER_CONCURRENCY, 4),
    publishing: {
      leaseMs: 1000 * positiveInteger('HERALD_PUBLISH_LEASE_SECONDS', env.HERALD_PUBLISH_LEASE_SECONDS, 300),
      maxLatenessMs: 1000 * positiveInteger('HERALD_MAX_LATENESS_SECONDS', env.HERALD_MAX_LATENESS_SECONDS, 3600),
      backoffBaseMs: positiveInteger('HERALD_RETRY_BASE_MS', env.HERALD_RETRY_BASE_MS, 30_000),
      liveSpacingMs: nonNegativeInteger('HERALD_LIVE_SPACING_MS', env.HERALD_LIVE_SPACING_MS, 1000),
      pollIntervalMs: nonEmpty(env.HERALD_POLL_INTERVAL_MS) === undefined ? null : positiveInteger('HERALD_POLL_INTERVAL_MS', env.HERALD_POLL_INTERVAL_MS, 1),
    },
    rateLimits: {
      perKeyPerMinute: positiveInteger('HERALD_RATE_LIMIT_PER_MINUTE', env.HERALD_RATE_LIMIT_PER_MINUTE, 600),
      writesPerKeyPerMinute: positiveInteger('HERALD_RATE_LIMIT_WRITES_PER_MINUTE', env.HERALD_RATE_LIMIT_WRITES_PER_MINUTE, 120),
      perAddressPerMinute: positiveInteger('HERALD_RATE_LIMIT_ANONYMOUS_PER_MINUTE', env.HERALD_RATE_LIMIT_ANONYMOUS_PER_MINUTE, 60),
    },
    redisUrl: nonEmpty(env.REDIS_URL),
    trustProxy: trustProxy(env.HERALD_TRUST_PROXY),
    webhooks: {
      timeoutMs: positiveInteger('HERALD_WEBHOOK_TIMEOUT_MS', env.HERALD_WEBHOOK_TIMEOUT_MS, 10_000),
      retryBaseMs: positiveInteger('HERALD_WEBHOOK_RETRY_BASE_MS', env.HERALD_WEBHOOK_RETRY_BASE_MS, 10_000),
      eventRetentionDays: positiveInteger('HERALD_EVENT_RETENTION_DAYS', env.HERALD_EVENT_RETENTION_DAYS, 30),
    },
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

function port(value: string | undefined): number {
  if (nonEmpty(value) === undefined) return 3000;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`PORT must be an integer from 0 to 65535, got ${value}`);
  return n;
}

/** An absolute http(s) URL without query or fragment; unset: this machine at PORT, which only local clients reach. */
function publicUrl(value: string | undefined, listenPort: number): string {
  const given = nonEmpty(value);
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

function positiveInteger(name: string, value: string | undefined, fallback: number): number {
  if (nonEmpty(value) === undefined) return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got ${value}`);
  return n;
}

function nonNegativeInteger(name: string, value: string | undefined, fallback: number): number {
  return value === '0' ? 0 : positiveInteger(name, value, fallback);
}

function trustProxy(value: string | undefined): boolean | string {
  const v = nonEmpty(value)?.trim();
  if (v === undefined || v.toLowerCase() === 'false') return false;
  return v.toLowerCase() === 'true' ? true : v;
}

function flag(name: string, value: string | undefined): boolean {
  const v = nonEmpty(value)?.toLowerCase();
  if (v === undefined || v === 'false' || v === '0') return false;
  if (v === 'true' || v === '1') return true;
  throw new Error(`${name} must be true or false, got ${value}`);
}
