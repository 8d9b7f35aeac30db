import type { Kysely } from 'kysely';
import type { AccountRow } from '../../db/queries/accounts.js';
import type { PostRow } from '../../db/queries/posts.js';
import { selectContentsOfPosts } from '../../db/queries/posts.js';
import { insertDeliveries, insertEvents, selectEnabledEndpoints, selectEnabledEndpointsOfUsers } from '../../db/queries/webhooks.js';
import type { Database, WebhookEventType } from '../../db/schema.js';
import { toAccountView } from '../accounts.js';
import type { Account, PostDetail } from '../api-types.js';
import { newId } from '../ids.js';
import { toPostDetail } from '../posts/post-detail.js';

export interface WebhookEvent<T = unknown> {
  id: string;
  type: WebhookEventType;
  timestamp: string;
  data: T;
}

/** An event to record, for whom, and the endpoints it goes to. */
interface EventToRecord {
  userId: string;
  type: WebhookEventType;
  data: unknown;
  endpointIds: string[];
}

/**
 * Records events with one delivery per endpoint each, due now, in the caller's transaction (two
 * statements, however many): an event exists exactly when the change it reports is committed,
 * and its deliveries are announced then.
 */
async function recordEvents(trx: Kysely<Database>, events: readonly EventToRecord[], now: Date): Promise<WebhookEvent[]> {
  const recorded = events.map(({ type, data }): WebhookEvent => ({ id: newId('evt'), type, timestamp: now.toISOString(), data }));
  await insertEvents(
    trx,
    recorded.map((event, i) => ({ id: event.id, user_id: events[i]?.userId ?? '', type: event.type, body: JSON.stringify(event), created_at: now })),
  );
  await insertDeliveries(
    trx,
    recorded.flatMap((event, i) =>
      (events[i]?.endpointIds ?? []).map((endpointId) => ({ id: newId('dlv'), event_id: event.id, endpoint_id: endpointId, due_at: now, created_at: now })),
    ),
  );
  return recorded;
}

async function recordEvent<T>(
  trx: Kysely<Database>,
  userId: string,
  type: WebhookEventType,
  data: T,
  endpointIds: string[],
  now: Date,
): Promise<WebhookEvent<T>> {
  const [event] = await recordEvents(trx, [{ userId, type, data, endpointIds }], now);
  if (event === undefined) throw new Error('an event recorded came back missing');
  return event as WebhookEvent<T>;
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
  await emitPublishingEventsOf(trx, [change], now);
}

/**
 * The events of many changes (one transaction of the publishing road over many posts), in as
 * many statements as one: the owners' endpoints, the posts' details where an event shows them,
 * the events and their deliveries.
 */
export async function emitPublishingEventsOf(trx: Kysely<Database>, changes: readonly PublishingChange[], now: Date): Promise<void> {
  const raising = changes.flatMap((change) => {
    const postType = change.previousStatus !== change.post.status ? SETTLED_POST_EVENTS[change.post.status] : undefined;
    return change.settledTargets.length === 0 && postType === undefined && change.needsReconnect.length === 0 ? [] : [{ change, postType }];
  });
  if (raising.length === 0) return;
  const endpoints = await selectEnabledEndpointsOfUsers(trx, [...new Set(raising.map(({ change }) => change.post.user_id))]);
  const wanting = (userId: string, type: WebhookEventType) => endpoints.filter((e) => e.user_id === userId && e.event_types.includes(type)).map((e) => e.id);

  // What each change raises that some endpoint wants, in order: its targets, the post, the accounts.
  const wanted = raising.flatMap(({ change, postType }) => {
    const userId = change.post.user_id;
    const events: { change: PublishingChange; type: WebhookEventType; endpointIds: string[]; accountId?: string; account?: AccountRow }[] = [
      ...change.settledTargets.map(({ accountId, type }) => ({ change, type, endpointIds: wanting(userId, type), accountId })),
      ...(postType === undefined ? [] : [{ change, type: postType, endpointIds: wanting(userId, postType) }]),
      ...change.needsReconnect.map((account) => ({
        change,
        type: 'account.needs_reconnect' as const,
        endpointIds: wanting(userId, 'account.needs_reconnect'),
        account,
      })),
    ];
    return events.filter((e) => e.endpointIds.length > 0);
  });
  if (wanted.length === 0) return;
  const shown = [...new Set(wanted.filter((e) => e.account === undefined).map((e) => e.change.post.id))];
  const contents = await selectContentsOfPosts(trx, shown);
  const detailOf = (post: PostRow): PostDetail => {
    const found = contents.get(post.id);
    if (found === undefined) throw new Error(`post ${post.id} is missing`);
    return toPostDetail(post, found);
  };
  await recordEvents(
    trx,
    wanted.map(({ change, type, endpointIds, accountId, account }) => {
      const { post } = change;
      let data: unknown;
      if (account !== undefined) data = toAccountView(account);
      else if (accountId === undefined) data = detailOf(post);
      else {
        const target = detailOf(post).targets.find((t) => t.accountId === accountId);
        if (target === undefined) throw new Error(`target ${accountId} of ${post.id} is missing`);
        data = { postId: post.id, target };
      }
      return { userId: post.user_id, type, data, endpointIds };
    }),
    now,
  );
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
