/** How the publishing road behaves. */
export interface PublishingSettings {
  /** How long a worker holds a target it is publishing before another may take it as interrupted; renewed while its call lives. */
  leaseMs: number;
  /** The longest one publication (every call of one target's attempt) may take: past it, the target is in doubt and retried with reconciliation. */
  publishTimeoutMs: number;
  /** Publications one worker has in flight at a time for one user, and for one platform host: one tenant's slow platform holds only its share. */
  maxInFlightPerUser: number;
  maxInFlightPerHost: number;
  /** A post that comes due later than this after its scheduledAt fails instead of going out stale. */
  maxLatenessMs: number;
  /** Automatic attempts per target (counted again from a manual retry). */
  maxAttempts: number;
  /** The first retry's delay; each next one doubles, with jitter, up to maxBackoffMs. */
  backoffBaseMs: number;
  maxBackoffMs: number;
  /** The least time between two publications of one live account, so a backlog never bursts. */
  liveSpacingMs: number;
  /** When set, how long to wait before looking again at work a platform is still doing, for every platform (tests); unset: each platform's own pace. */
  pollIntervalMs: number | null;
}

/** What the environment does not set: the rest comes from the configuration table (src/cli/wiring/configuration.ts). */
export const PUBLISHING_LIMITS = {
  maxAttempts: 5,
  maxBackoffMs: 30 * 60_000,
  maxInFlightPerUser: 8,
  maxInFlightPerHost: 16,
} satisfies Partial<PublishingSettings>;

/** Exponential backoff with "equal jitter": half the delay fixed, half random, so retries of many targets spread out. */
export function backoffMs(settings: PublishingSettings, attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(settings.maxBackoffMs, settings.backoffBaseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
