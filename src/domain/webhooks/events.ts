import type { Kysely } from 'kysely';
import type { AccountRow } from '../../db/queries/accounts.js';
import type { PostRow } from '../../db/queries/posts.js';
import { insertDeliveries, insertEvent, selectEnabledEndpoints } from '../../db/queries/webhooks.js';
import type { Database, WebhookEventType } from '../../db/schema.js';
import { toAccountView } from '../accounts.js';
import type { Account, PostDetail } from '../api-types.js';
import { newId } from '../ids.js';
import { loadPostDetail } from '../posts/post-detail.js';

export interface WebhookEvent<T = unknown> {
  id: string;
  type: WebhookEventType;
  timestamp: string;
  data: T;
}

/**
 * Records an event with one delivery per endpoint, due now, in the caller's transaction: the event
 * exists exactly when the change it reports is committed, and its deliveries are announced then.
 */
async function recordEvent<T>(
  trx: Kysely<Database>,
  userId: string,
  type: WebhookEventType,
  data: T,
  endpointIds: string[],
  now: Date,
): Promise<WebhookEvent<T>> {
  const event: WebhookEvent<T> = { id: newId('evt'), type, timestamp: now.toISOString(), data };
  await insertEvent(trx, { id: event.id, user_id: userId, type, body: JSON.stringify(event), created_at: now });
  await insertDeliveries(
    trx,
    endpointIds.map((endpointId) => ({ id: newId('dlv'), event_id: event.id, endpoint_id: endpointId, due_at: now, created_at: now })),
  );
  return event;
}

/** What became of a post in one transaction of the publishing road, for the events it raises. */
export interface PublishingChange {
  /** The post as it now stands (its new status written). */
  post: PostRow;
  /** The post's status before the change. */
  previousStatus: string;
  /** Targets that settled: published, unknown, or failed with no automatic retry left. */
  settledTargets: { accountId: string; type: 'target.published' | 'target.failed' | 'target.unknown' }[];
  /** Accounts whose credentials the platform refused for good in this change. */
  needsReconnect: AccountRow[];
}

const SETTLED_POST_EVENTS: Partial<Record<string, WebhookEventType>> = {
  published: 'post.published',
  partial: 'post.partial',
  failed: 'post.failed',
};

/**
 * Raises the events of one change for the post's owner: one per settled target, one when the
 * post itself settles, one per account that needs reconnecting. An event no endpoint wants is
 * not recorded: when nobody listens, a change costs one indexed lookup of the owner's endpoints.
 */
export async function emitPublishingEvents(trx: Kysely<Database>, change: PublishingChange, now: Date): Promise<void> {
  const { post } = change;
  const postType = change.previousStatus !== post.status ? SETTLED_POST_EVENTS[post.status] : undefined;
  if (change.settledTargets.length === 0 && postType === undefined && change.needsReconnect.length === 0) return;
  const endpoints = await selectEnabledEndpoints(trx, post.user_id);
  let detail: PostDetail | undefined;
  const postDetail = async () => (detail ??= await loadPostDetail(trx, post));
  const emit = async (type: WebhookEventType, data: () => Promise<unknown>) => {
    const wanting = endpoints.filter((e) => e.event_types.includes(type)).map((e) => e.id);
    if (wanting.length > 0) await recordEvent(trx, post.user_id, type, await data(), wanting, now);
  };

  for (const { accountId, type } of change.settledTargets) {
    await emit(type, async () => {
      const target = (await postDetail()).targets.find((t) => t.accountId === accountId);
      if (target === undefined) throw new Error(`target ${accountId} of ${post.id} is missing`);
      return { postId: post.id, target };
    });
  }
  if (postType !== undefined) await emit(postType, postDetail);
  for (const account of change.needsReconnect) await emit('account.needs_reconnect', () => Promise.resolve(toAccountView(account)));
}

/**
 * An event about an account for the user it belongs to, recorded for their endpoints that want it
 * (none wanting it: nothing recorded).
 */
export async function emitAccountEvent(
  db: Kysely<Database>,
  userId: string,
  type: 'account.connected' | 'account.expiring' | 'account.needs_reconnect',
  account: Account,
  now: Date,
): Promise<void> {
  const wanting = (await selectEnabledEndpoints(db, userId)).filter((e) => e.event_types.includes(type)).map((e) => e.id);
  if (wanting.length > 0) await recordEvent(db, userId, type, account, wanting, now);
}

export const PING_MESSAGE = 'A test event from Herald; answer with a 2xx status.';

/** A ping for one endpoint, whether it is enabled or subscribed or not. */
export async function emitPing(
  trx: Kysely<Database>,
  endpoint: { id: string; user_id: string },
  now: Date,
): Promise<WebhookEvent<{ webhookId: string; message: string }>> {
  return recordEvent(trx, endpoint.user_id, 'ping', { webhookId: endpoint.id, message: PING_MESSAGE }, [endpoint.id], now);
}
