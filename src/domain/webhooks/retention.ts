import type { Kysely } from 'kysely';
import { deleteEventsCreatedBefore } from '../../db/queries/webhooks.js';
import type { Database } from '../../db/schema.js';
import type { WebhookSettings } from './settings.js';

/** Events deleted per statement: each statement's locks and work stay small, whatever the backlog. */
const BATCH = 1000;
const DAY_MS = 24 * 60 * 60_000;

/**
 * Deletes the events created longer ago than the retention, with their deliveries and attempts
 * (GET /webhooks/{id}/deliveries no longer lists them), a batch per statement until none is left;
 * how many events went.
 */
export async function deleteExpiredEvents(db: Kysely<Database>, settings: Pick<WebhookSettings, 'eventRetentionDays'>, now: Date): Promise<number> {
  const before = new Date(now.getTime() - settings.eventRetentionDays * DAY_MS);
  let deleted = 0;
  for (;;) {
    const batch = await deleteEventsCreatedBefore(db, before, BATCH);
    deleted += batch;
    if (batch < BATCH) return deleted;
  }
}
