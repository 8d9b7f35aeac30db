/** How the publishing road behaves; every value can be set from the environment (README). */
export interface PublishingSettings {
  /** How long a worker holds a target it is publishing before another may take it as interrupted. */
  leaseMs: number;
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

export const DEFAULT_PUBLISHING_SETTINGS: PublishingSettings = {
  leaseMs: 5 * 60_000,
  maxLatenessMs: 60 * 60_000,
  maxAttempts: 5,
  backoffBaseMs: 30_000,
  maxBackoffMs: 30 * 60_000,
  liveSpacingMs: 1_000,
  pollIntervalMs: null,
};

/** Exponential backoff with "equal jitter": half the delay fixed, half random, so retries of many targets spread out. */
export function backoffMs(settings: PublishingSettings, attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(settings.maxBackoffMs, settings.backoffBaseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
