import { CompiledQuery, type Kysely } from 'kysely';
import PgBoss from 'pg-boss';
import type { Database } from '../data/schema.js';

/**
 * When a worker should look at a post. The post's rows are the record of what to publish and
 * what was published; a job only wakes a worker at a time. Jobs are sent and cancelled inside
 * the caller's transaction, so a post is never scheduled without its job, and a job of a post
 * that was rolled back never exists.
 */
export interface PublicationQueue {
  /** Wakes a worker for the post at `runAt`; returns the job's id. */
  wake(trx: Kysely<Database>, postId: string, runAt: Date): Promise<string>;
  /** Cancels a job that has not run; a job that ran or is unknown is left as it is. */
  cancel(trx: Kysely<Database>, jobId: string): Promise<void>;
  /** Wakes a worker to attempt a webhook delivery at `runAt`. */
  deliver(trx: Kysely<Database>, deliveryId: string, runAt: Date): Promise<void>;
}

export const PUBLISH_QUEUE = 'herald-publish';

export interface PublishJob {
  postId: string;
}

export const WEBHOOK_QUEUE = 'herald-webhook';

/** Housekeeping on a schedule: expired idempotency keys and abandoned uploads go. */
export const MAINTENANCE_QUEUE = 'herald-maintenance';
const MAINTENANCE_CRON = '*/15 * * * *';

export interface DeliveryJob {
  deliveryId: string;
}

/** pg-boss (10.x, the last major for Node 20) on Herald's own connection, so that PGlite's single connection is shared. */
export class PgBossQueue implements PublicationQueue {
  readonly boss: PgBoss;
  private readonly supervises: boolean;

  constructor(db: Kysely<Database>, options: { supervise: boolean; onError?: (err: Error) => void }) {
    this.supervises = options.supervise;
    this.boss = new PgBoss({
      db: executorFor(db),
      schema: 'pgboss',
      supervise: options.supervise,
      // Only processes that run workers keep the maintenance schedule; an API-only one never polls it.
      schedule: options.supervise,
      // The maintenance schedule runs every 15 minutes, so checking it twice a minute, not every 5 s, keeps an idle worker idle.
      cronWorkerIntervalSeconds: 45,
      cronMonitorIntervalSeconds: 45,
      migrate: true,
    });
    // pg-boss reports a failed poll or maintenance run (the database gone a moment) as an 'error'
    // event; without a listener Node would take it for an uncaught error and the process would stop.
    this.boss.on('error', options.onError ?? (() => {}));
  }

  /** Installs or upgrades pg-boss's schema and the publish queue; safe from several processes at once. */
  async start(): Promise<void> {
    await this.boss.start();
    for (const name of [PUBLISH_QUEUE, WEBHOOK_QUEUE, MAINTENANCE_QUEUE]) {
      if ((await this.boss.getQueue(name)) === null) await this.boss.createQueue(name);
    }
    // One schedule per queue name, whatever the number of processes that set it.
    if (this.supervises) await this.boss.schedule(MAINTENANCE_QUEUE, MAINTENANCE_CRON);
  }

  async stop(): Promise<void> {
    await this.boss.stop({ graceful: true, close: false, wait: true });
  }

  async wake(trx: Kysely<Database>, postId: string, runAt: Date): Promise<string> {
    const data: PublishJob = { postId };
    // A job that runs and finds nothing due completes; pg-boss's own retries cover a worker crash in between.
    const id = await this.boss.send(PUBLISH_QUEUE, data, { startAfter: runAt, retryLimit: 10, retryDelay: 5, retryBackoff: true, db: executorFor(trx) });
    if (id === null) throw new Error(`pg-boss did not create the job for ${postId}`);
    return id;
  }

  async deliver(trx: Kysely<Database>, deliveryId: string, runAt: Date): Promise<void> {
    const data: DeliveryJob = { deliveryId };
    // The delivery's row is the record; a job that finds it not due completes, so pg-boss's retries only cover a crashed worker.
    await this.boss.send(WEBHOOK_QUEUE, data, { startAfter: runAt, retryLimit: 10, retryDelay: 5, retryBackoff: true, db: executorFor(trx) });
  }

  async cancel(trx: Kysely<Database>, jobId: string): Promise<void> {
    await this.boss.cancel(PUBLISH_QUEUE, jobId, { db: executorFor(trx) });
  }
}

/** pg-boss's database interface, run through Kysely: inside a transaction when given one. */
function executorFor(db: Kysely<Database>): { executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> } {
  return {
    async executeSql(text, values = []) {
      const result = await db.executeQuery(CompiledQuery.raw(text, values));
      return { rows: result.rows };
    },
  };
}
