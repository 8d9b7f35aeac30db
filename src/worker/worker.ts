import { errorName } from '../domain/errors.js';
import { purgeExpiredIdempotencyKeys } from '../domain/idempotency.js';
import { publishNextDuePost, publishPostIfDue, type PublishingDeps } from '../domain/publishing/engine.js';
import { deliverIfDue, deliverNextDue, type DeliveryDeps } from '../domain/webhooks/delivery.js';
import { selectNextDueWait } from '../data/queries/publishing.js';
import { selectNextDeliveryLeaseEnd } from '../data/queries/webhooks.js';
import type PgBoss from 'pg-boss';
import { MAINTENANCE_QUEUE, PUBLISH_QUEUE, WEBHOOK_QUEUE, type DeliveryJob, type PgBossQueue, type PublishJob } from '../queue/publication-queue.js';

/** How often a running worker also looks for due work by itself, beside its jobs (a safety net, never the only way). */
const SWEEP_INTERVAL_MS = 30_000;
/** The longest a draining worker sleeps before looking again at work other workers hold. */
const DRAIN_POLL_MS = 250;

export interface RunningWorker {
  /** Stops taking work and waits for what is in hand. */
  stop(): Promise<void>;
}

/**
 * Publishes posts and delivers webhook events as their jobs come due, `concurrency` of each at a
 * time, and sweeps for due work now and then. Holds no state, so several of these can run beside
 * each other on one database.
 */
export async function startWorker(deps: PublishingDeps, queue: PgBossQueue, concurrency: number): Promise<RunningWorker> {
  const publish = async (jobs: PgBoss.Job<PublishJob>[]): Promise<void> => {
    await Promise.all(jobs.map((job) => publishPostIfDue(deps, job.data.postId)));
  };
  const deliver = async (jobs: PgBoss.Job<DeliveryJob>[]): Promise<void> => {
    await Promise.all(jobs.map((job) => deliverIfDue(deps, job.data.deliveryId)));
  };
  const maintain = async (): Promise<void> => {
    const purged = await purgeExpiredIdempotencyKeys(deps.db, deps.now());
    deps.log.info({ purged }, 'expired idempotency keys purged');
  };
  const workIds = [
    await queue.boss.work(PUBLISH_QUEUE, { batchSize: concurrency, pollingIntervalSeconds: 0.5 }, publish),
    await queue.boss.work(WEBHOOK_QUEUE, { batchSize: concurrency, pollingIntervalSeconds: 0.5 }, deliver),
    await queue.boss.work(MAINTENANCE_QUEUE, { pollingIntervalSeconds: 30 }, maintain),
  ];
  let sweeping: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    sweeping = sweeping.then(() => sweep(deps, concurrency)).catch((error: unknown) => deps.log.error({ errorName: errorName(error) }, 'sweep for due work failed'));
  }, SWEEP_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      for (const id of workIds) await queue.boss.offWork({ id });
      await sweeping;
    },
  };
}

async function sweep(deps: PublishingDeps, concurrency: number): Promise<void> {
  await Promise.all(Array.from({ length: concurrency }, () => drainLane(deps, false)));
  await Promise.all(Array.from({ length: concurrency }, () => deliveryLane(deps, false)));
}

/**
 * Publishes everything due now, waits for what other workers hold, and returns once nothing due
 * is left (`herald worker --once`), with how many posts it published (or tried to). Retries scheduled for later
 * are left to their time.
 */
export async function drain(deps: PublishingDeps, concurrency: number): Promise<number> {
  const counts = await Promise.all(Array.from({ length: concurrency }, () => drainLane(deps, true)));
  return counts.reduce((a, b) => a + b, 0);
}

/** Takes due posts one after another; returns how many times it took targets and published them. */
async function drainLane(deps: PublishingDeps, waitForOthers: boolean): Promise<number> {
  let acted = 0;
  for (;;) {
    const step = await publishNextDuePost(deps);
    if (step === 'published') acted += 1;
    if (step !== 'none') continue;
    if (!waitForOthers) return acted;
    const wait = await selectNextDueWait(deps.db, deps.now());
    if (wait === null) return acted;
    const ms = Math.min(DRAIN_POLL_MS, Math.max(10, wait.getTime() - deps.now().getTime()));
    await new Promise((resolve) => setTimeout(resolve, ms));
  }
}

/**
 * Sends every webhook delivery due now, waits for those other workers hold, and returns once none
 * is left (`herald worker --once`), with how many attempts it made. Retries scheduled for later
 * are left to their time.
 */
export async function drainDeliveries(deps: DeliveryDeps, concurrency: number): Promise<number> {
  const counts = await Promise.all(Array.from({ length: concurrency }, () => deliveryLane(deps, true)));
  return counts.reduce((a, b) => a + b, 0);
}

async function deliveryLane(deps: DeliveryDeps, waitForOthers: boolean): Promise<number> {
  let sent = 0;
  for (;;) {
    const step = await deliverNextDue(deps);
    if (step === 'delivered') sent += 1;
    if (step !== 'none') continue;
    if (!waitForOthers) return sent;
    const leaseEnd = await selectNextDeliveryLeaseEnd(deps.db);
    if (leaseEnd === null) return sent;
    const ms = Math.min(DRAIN_POLL_MS, Math.max(10, leaseEnd.getTime() - deps.now().getTime()));
    await new Promise((resolve) => setTimeout(resolve, ms));
  }
}
