import { sql, type Insertable, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { Database, WebhookAttemptsTable, WebhookDeliveriesTable, WebhookEndpointsTable, WebhookEventsTable } from '../schema.js';

export type EndpointRow = Selectable<WebhookEndpointsTable>;
export type EventRow = Selectable<WebhookEventsTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type AttemptRow = Selectable<WebhookAttemptsTable>;

export async function insertEndpoint(db: Kysely<Database>, row: Insertable<WebhookEndpointsTable>): Promise<EndpointRow> {
  return db.insertInto('webhook_endpoints').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function selectEndpointsPage(db: Kysely<Database>, userId: string, limit: number, offset: number): Promise<EndpointRow[]> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

export async function selectEndpointOwnedBy(db: Kysely<Database>, id: string, userId: string): Promise<EndpointRow | undefined> {
  return db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
}

/** Changes an endpoint of this owner; undefined when there is none. */
export async function updateEndpointOwnedBy(
  db: Kysely<Database>,
  id: string,
  userId: string,
  values: Updateable<WebhookEndpointsTable>,
): Promise<EndpointRow | undefined> {
  return db.updateTable('webhook_endpoints').set(values).where('id', '=', id).where('user_id', '=', userId).returningAll().executeTakeFirst();
}

/** Deletes an endpoint of this owner with its deliveries and attempts; false when there is none. */
/**
 * Deletes the endpoint and, by cascade, its deliveries. Their rows are locked first, in the order a
 * worker recording an attempt takes them (delivery, then endpoint), so the two never deadlock.
 */
export async function deleteEndpointOwnedBy(db: Kysely<Database>, id: string, userId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const owned = await trx.selectFrom('webhook_endpoints').select('id').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
    if (owned === undefined) return false;
    await trx.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', id).orderBy('id').forUpdate().execute();
    const result = await trx.deleteFrom('webhook_endpoints').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
    return result.numDeletedRows > 0n;
  });
}

/** The owner's enabled endpoints and the event types each wants. */
export async function selectEnabledEndpoints(db: Kysely<Database>, userId: string): Promise<Pick<EndpointRow, 'id' | 'event_types'>[]> {
  return selectEnabledEndpointsOfUsers(db, [userId]);
}

/** The enabled endpoints of these owners, with the event types each wants. */
export async function selectEnabledEndpointsOfUsers(
  db: Kysely<Database>,
  userIds: readonly string[],
): Promise<Pick<EndpointRow, 'id' | 'user_id' | 'event_types'>[]> {
  if (userIds.length === 0) return [];
  return db.selectFrom('webhook_endpoints').select(['id', 'user_id', 'event_types']).where('user_id', 'in', userIds).where('enabled', '=', true).execute();
}

export async function insertEvents(db: Kysely<Database>, rows: Insertable<WebhookEventsTable>[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insertInto('webhook_events').values(rows).execute();
}

export async function insertDeliveries(db: Kysely<Database>, rows: Insertable<WebhookDeliveriesTable>[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insertInto('webhook_deliveries').values(rows).execute();
}

export async function selectDeliveryForUpdate(db: Kysely<Database>, id: string): Promise<DeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/**
 * Locks the next delivery due now that no other worker holds, passing over those whose endpoint
 * has `perEndpoint` attempts in flight (delivering, lease not ended) or whose endpoint's owner has
 * `perUser`: a walk along webhook_deliveries_due_at_idx past the deliveries passed over.
 */
export async function selectNextDueDeliveryForUpdate(
  db: Kysely<Database>,
  now: Date,
  caps: { perEndpoint: number; perUser: number },
): Promise<DeliveryRow | undefined> {
  return db
    .with('in_flight', (qb) =>
      qb
        .selectFrom('webhook_deliveries as f')
        .innerJoin('webhook_endpoints as fe', 'fe.id', 'f.endpoint_id')
        .select(['f.endpoint_id', 'fe.user_id'])
        .where('f.state', '=', 'delivering')
        .where('f.due_at', '>', now),
    )
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .selectAll('d')
    .where('d.due_at', '<=', now)
    .where('d.endpoint_id', 'not in', (eb) =>
      eb
        .selectFrom('in_flight')
        .select('endpoint_id')
        .groupBy('endpoint_id')
        .having((h) => h.fn.countAll(), '>=', caps.perEndpoint),
    )
    .where('e.user_id', 'not in', (eb) =>
      eb
        .selectFrom('in_flight')
        .select('user_id')
        .groupBy('user_id')
        .having((h) => h.fn.countAll(), '>=', caps.perUser),
    )
    .orderBy('d.due_at')
    .limit(1)
    .forUpdate('d')
    .skipLocked()
    .executeTakeFirst();
}

/**
 * Makes claims of this user's deliveries take turns until the transaction ends (an advisory lock,
 * so nothing else that touches the user waits): each then counts the attempts the others took.
 */
export async function lockDeliveryClaimsOf(db: Kysely<Database>, userId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`herald.webhook-claims.${userId}`}, 0))`.execute(db);
}

/** Attempts in flight now (delivering, lease not ended) to this endpoint, and to all its owner's endpoints (webhook_deliveries_in_flight_idx). */
export async function countAttemptsInFlight(db: Kysely<Database>, endpointId: string, userId: string, now: Date): Promise<{ endpoint: number; user: number }> {
  const row = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .select([sql<number>`(count(*) filter (where d.endpoint_id = ${endpointId}))::int`.as('endpoint'), sql<number>`count(*)::int`.as('user')])
    .where('e.user_id', '=', userId)
    .where('d.state', '=', 'delivering')
    .where('d.due_at', '>', now)
    .executeTakeFirstOrThrow();
  return { endpoint: row.endpoint, user: row.user };
}

/** The soonest time after `after` a delivery is due (its next attempt, or a lease's end); null when none is. */
export async function selectSoonestDeliveryDueAfter(db: Kysely<Database>, after: Date): Promise<Date | null> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.min('due_at').as('at'))
    .where('due_at', '>', after)
    .executeTakeFirst();
  return row?.at ?? null;
}

/** When the soonest delivery another worker holds will be due again (its lease's end); null when none is held. */
export async function selectNextDeliveryLeaseEnd(db: Kysely<Database>): Promise<Date | null> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.min('due_at').as('at'))
    .where('state', '=', 'delivering')
    .executeTakeFirst();
  return row?.at ?? null;
}

export async function updateDelivery(db: Kysely<Database>, id: string, values: Updateable<WebhookDeliveriesTable>): Promise<void> {
  await db.updateTable('webhook_deliveries').set(values).where('id', '=', id).execute();
}

export async function selectEvent(db: Kysely<Database>, id: string): Promise<EventRow | undefined> {
  return db.selectFrom('webhook_events').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function selectEndpointForUpdate(db: Kysely<Database>, id: string): Promise<EndpointRow | undefined> {
  return db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function updateEndpoint(db: Kysely<Database>, id: string, values: Updateable<WebhookEndpointsTable>): Promise<void> {
  await db.updateTable('webhook_endpoints').set(values).where('id', '=', id).execute();
}

export async function insertAttempt(db: Kysely<Database>, row: Insertable<WebhookAttemptsTable>): Promise<void> {
  await db
    .insertInto('webhook_attempts')
    .values(row)
    .onConflict((oc) => oc.columns(['delivery_id', 'attempt']).doNothing())
    .execute();
}

export async function selectAttemptsPage(db: Kysely<Database>, endpointId: string, limit: number, offset: number): Promise<AttemptRow[]> {
  return db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('endpoint_id', '=', endpointId)
    .orderBy('attempted_at', 'desc')
    .orderBy('attempt', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

/** Locks an endpoint of this owner for a change that depends on what it holds (a rotation, a re-enable). */
export async function selectEndpointOwnedByForUpdate(db: Kysely<Database>, id: string, userId: string): Promise<EndpointRow | undefined> {
  return db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).where('user_id', '=', userId).forUpdate().executeTakeFirst();
}

/**
 * Deletes up to `limit` events created before `before`, with their deliveries and attempts (the
 * foreign keys cascade), passing over any event a delivery of which is still due: an event is
 * never lost before it has been sent or given up. How many events went.
 */
export async function deleteEventsCreatedBefore(db: Kysely<Database>, before: Date, limit: number): Promise<number> {
  const result = await db
    .deleteFrom('webhook_events')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('webhook_events as e')
        .select('e.id')
        .where('e.created_at', '<', before)
        .where((w) =>
          w.not(w.exists(w.selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.event_id', '=', 'e.id').where('d.due_at', 'is not', null))),
        )
        .limit(limit),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
