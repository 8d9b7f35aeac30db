/** How webhook delivery behaves. */
export interface WebhookSettings {
  /** How long an endpoint has to answer one request. */
  timeoutMs: number;
  /** Attempts per event and endpoint, the first included. */
  maxAttempts: number;
  /** The wait after the first failed attempt; each next one is five times longer, up to maxRetryDelayMs. */
  retryBaseMs: number;
  maxRetryDelayMs: number;
  /**
   * Attempts in flight at once, across every worker, to one endpoint and to all the endpoints of
   * one user. A delivery past either is held back, not attempted, until one of them ends: a
   * user's slow receivers hold a few of the workers' delivery lanes, never all of them.
   */
  maxInFlightPerEndpoint: number;
  maxInFlightPerUser: number;
  /** How long an event, its deliveries and their attempts are kept once none of its deliveries is due. */
  eventRetentionDays: number;
}

/** What the environment does not set: the rest comes from the configuration table (src/cli/wiring/configuration.ts). */
export const WEBHOOK_LIMITS = {
  maxAttempts: 8,
  maxRetryDelayMs: 12 * 60 * 60_000,
  maxInFlightPerEndpoint: 2,
  maxInFlightPerUser: 4,
} satisfies Partial<WebhookSettings>;

/**
 * The wait before the attempt after `attemptsMade` failed ones: 10 s, 50 s, 4 min, 21 min, 1.7 h,
 * 8.7 h, 12 h by default (about 23 hours in all), each within ±10 % so that the retries of many
 * events to one endpoint that came back spread out.
 */
export function retryDelayMs(settings: WebhookSettings, attemptsMade: number, random: () => number = Math.random): number {
  const delay = Math.min(settings.maxRetryDelayMs, settings.retryBaseMs * 5 ** Math.max(0, attemptsMade - 1));
  return Math.round(delay * (0.9 + 0.2 * random()));
}

/**
 * How long a worker holds a delivery it is sending before another takes it as interrupted: the
 * request's timeout and a margin for recording its outcome. Should a worker overrun it, the
 * event is sent again with the same id, which receivers deduplicate.
 */
export function deliveryLeaseMs(settings: WebhookSettings): number {
  return settings.timeoutMs + 5_000;
}
