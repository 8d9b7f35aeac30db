import { errorName } from '../domain/errors.js';
import type { Dependencies } from '../domain/dependencies.js';
import { InFlight } from '../domain/publishing/in-flight.js';
import { publishDuePosts, takeDuePosts } from '../domain/publishing/publication.js';
import { deliverNextDue, takeNextDueDelivery, type DeliveryDeps } from '../domain/webhooks/delivery.js';
import { DUE_CHANNEL, selectNextDueWait, selectSoonestPostCheckAfter } from '../db/queries/publishing.js';
import { selectNextDeliveryLeaseEnd, selectSoonestDeliveryDueAfter } from '../db/queries/webhooks.js';
import type { DatabaseHandle } from '../db/database.js';
import { DueWatch } from './due-watch.js';
import { keepHouseEvery } from './housekeeping.js';
import { Lanes, type Step } from './lanes.js';

/**
 * The longest a worker goes without looking for due work. Work due within a minute is announced
 * as it commits (migration 0007); anything later is found by one of these looks before it is due,
 * and so is anything announced while no worker listened.
 */
const LOOK_INTERVAL_MS = 30_000;
/** How often a worker that cannot hear announcements looks, until it hears them again. */
const DEAF_LOOK_MS = 1_000;
/** The longest a draining worker sleeps before looking again at work other workers hold. */
const DRAIN_POLL_MS = 250;
/**
 * Webhook attempts one worker makes at a time. Each mostly waits on a receiver, so there are more
 * of them than posts published at a time, and several times what one user may hold
 * (maxInFlightPerUser): a user whose receivers never answer leaves the rest to everyone else.
 */
const DELIVERY_LANES = 16;
/**
 * The most due posts one claim takes: each step of a lane claims, publishes and records that many
 * posts in a few statements, rather than a few statements per post. A worker's posts in hand are
 * at most its lanes times this.
 */
export const CLAIM_BATCH = 64;

export interface RunningWorker {
  /** Stops taking work and waits for what is in hand. */
  stop(): Promise<void>;
}

/** Where announcements of due work are heard: the database's LISTEN. */
export type DueAnnouncements = Pick<DatabaseHandle, 'listen'>;

/**
 * Publishes posts (`concurrency` lanes claiming them; the calls they take go on beside, each
 * settling on its own, up to each user's and platform host's share) and delivers webhook events (DELIVERY_LANES at a time)
 * as they come due, each on lanes of its own, so that publishing never waits on a receiver, and
 * keeps house now and then. The rows' due times are the only queue: an idle worker sleeps until
 * the soonest one it knows of, and wakes sooner when work due sooner is announced. Holds no state,
 * so several of these can run beside each other on one database.
 */
export async function startWorker(deps: Dependencies, concurrency: number, announcements: DueAnnouncements): Promise<RunningWorker> {
  let hearing = false;
  const now = () => deps.now().getTime();
  /** Lanes for one kind of work, and the watch that wakes them when it comes due; a look never waits for work in hand. */
  const dueLoop = (work: string, size: number, step: () => Promise<Step>, soonestAfter: (after: Date) => Promise<Date | null>) => {
    const lanes = new Lanes(size, step, (error) => {
      deps.log.error({ work, errorName: errorName(error) }, 'taking due work failed');
      watch.dueAt(now() + DEAF_LOOK_MS);
    });
    const look = async (): Promise<number> => {
      // Taken before the lanes look: what they find not yet due is due after it, so the look below finds it.
      const at = deps.now();
      lanes.wake();
      return nextLookAt(await soonestAfter(at), now(), hearing);
    };
    const watch = new DueWatch(look, (error) => deps.log.error({ work, errorName: errorName(error) }, 'looking for due work failed'), DEAF_LOOK_MS, now);
    return { lanes, watch };
  };
  // A lane hands the calls it took to these and claims again at once; one settling frees its user's and host's place, so the lanes look again.
  const inFlight = new InFlight({ perUser: deps.settings.maxInFlightPerUser, perHost: deps.settings.maxInFlightPerHost }, () => posts.lanes.wake());
  const posts = dueLoop(
    'posts',
    concurrency,
    async () => {
      // No more targets in hand than a worker's lanes held when each awaited its batch: a backlog is taken as calls settle.
      if (inFlight.held >= concurrency * CLAIM_BATCH) return 'none';
      const taken = await takeDuePosts(deps, CLAIM_BATCH, inFlight);
      if (typeof taken === 'string') return taken;
      inFlight.track(taken.publish());
      return 'settled';
    },
    (after) => selectSoonestPostCheckAfter(deps.db, after),
  );
  const loops = [
    posts,
    dueLoop(
      'deliveries',
      DELIVERY_LANES,
      async () => {
        const taken = await takeNextDueDelivery(deps);
        return typeof taken === 'string' ? taken : () => taken.send();
      },
      (after) => selectSoonestDeliveryDueAfter(deps.db, after),
    ),
  ];
  // An announcement does not say what came due: both kinds look, each one step of its own index.
  const dueAt = (at: number) => {
    for (const loop of loops) loop.watch.dueAt(at);
  };
  const stopListening = await announcements.listen(DUE_CHANNEL, {
    notified: (payload) => {
      const at = Number(payload);
      dueAt(Number.isFinite(at) ? at : now());
    },
    // What was announced while deaf is found by looking now.
    listening: () => {
      hearing = true;
      dueAt(now());
    },
    deaf: () => {
      hearing = false;
      dueAt(now() + DEAF_LOOK_MS);
    },
  });
  if (!hearing) dueAt(now());
  const housekeeping = keepHouseEvery(deps);
  return {
    async stop() {
      await stopListening();
      await Promise.all(loops.map((loop) => loop.watch.stop()));
      await Promise.all(loops.map((loop) => loop.lanes.stop()));
      await inFlight.idle();
      await housekeeping.stop();
    },
  };
}

/**
 * When to look next, given the soonest due time after the look began: then, or when a worker
 * looks anyway (sooner while it cannot hear announcements). Work already due is the lanes': they
 * take it until none is left, and one that frees up takes what was held back for it.
 */
export function nextLookAt(soonest: Date | null, now: number, hearing: boolean): number {
  const latest = now + (hearing ? LOOK_INTERVAL_MS : DEAF_LOOK_MS);
  return soonest === null ? latest : Math.min(latest, soonest.getTime());
}

/**
 * Publishes everything due now, waits for what other workers hold, and returns once nothing due
 * is left (`herald worker --once`), with how many posts it published (or tried to). Retries scheduled for later
 * are left to their time.
 */
export async function drain(deps: Dependencies, concurrency: number): Promise<number> {
  const counts = await Promise.all(Array.from({ length: concurrency }, () => drainLane(deps)));
  return counts.reduce((a, b) => a + b, 0);
}

/** Takes due posts a batch after another; returns how many posts it took targets of and published. */
async function drainLane(deps: Dependencies): Promise<number> {
  let acted = 0;
  for (;;) {
    // Waits are those still ahead when the claim found nothing: one that ended since (a paced
    // account's slot) is due now, not a reason to stop with its post unpublished.
    const looked = deps.now();
    const step = await publishDuePosts(deps, CLAIM_BATCH);
    if (typeof step === 'number') acted += step;
    if (step !== 'none') continue;
    const wait = await selectNextDueWait(deps.db, looked);
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
  const counts = await Promise.all(Array.from({ length: concurrency }, () => deliveryLane(deps)));
  return counts.reduce((a, b) => a + b, 0);
}

async function deliveryLane(deps: DeliveryDeps): Promise<number> {
  let sent = 0;
  for (;;) {
    const step = await deliverNextDue(deps);
    if (step === 'delivered') sent += 1;
    if (step !== 'none') continue;
    const leaseEnd = await selectNextDeliveryLeaseEnd(deps.db);
    if (leaseEnd === null) return sent;
    const ms = Math.min(DRAIN_POLL_MS, Math.max(10, leaseEnd.getTime() - deps.now().getTime()));
    await new Promise((resolve) => setTimeout(resolve, ms));
  }
}
