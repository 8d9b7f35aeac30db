import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { ConnectionsTable, Database, InstanceAppsTable } from '../schema.js';

export type ConnectionRow = Selectable<ConnectionsTable>;

export async function insertConnection(db: Kysely<Database>, row: Insertable<ConnectionsTable>): Promise<ConnectionRow> {
  return db.insertInto('connections').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function selectConnection(db: Kysely<Database>, userId: string, id: string): Promise<ConnectionRow | undefined> {
  return db.selectFrom('connections').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
}

/**
 * Binds a pending, unexpired connection to the browser that first opens its consent link: only
 * while no browser is bound, so a second opener (or a replay) gets nothing.
 */
export async function bindConnectionBrowser(db: Kysely<Database>, startHash: string, browserHash: string, now: Date): Promise<ConnectionRow | undefined> {
  return db
    .updateTable('connections')
    .set({ browser_hash: browserHash })
    .where('start_hash', '=', startHash)
    .where('browser_hash', 'is', null)
    .where('status', '=', 'pending')
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Takes the pending connection a state belongs to, once, when the browser holds the cookie bound
 * to it: the state is cleared in the same statement, so a second callback with it finds nothing,
 * whichever comes first. A state without its browser is not taken (the bound browser may still come).
 */
export async function takeConnectionByState(db: Kysely<Database>, stateHash: string, browserHashes: readonly string[]): Promise<ConnectionRow | undefined> {
  if (browserHashes.length === 0) return undefined;
  return db
    .updateTable('connections')
    .set({ state_hash: null })
    .where('state_hash', '=', stateHash)
    .where('status', '=', 'pending')
    .where('browser_hash', 'in', browserHashes)
    .returningAll()
    .executeTakeFirst();
}

/** Whether a state belongs to a pending connection (one the browser at hand is not bound to). */
export async function isPendingState(db: Kysely<Database>, stateHash: string): Promise<boolean> {
  const row = await db.selectFrom('connections').select('id').where('state_hash', '=', stateHash).where('status', '=', 'pending').executeTakeFirst();
  return row !== undefined;
}

/** Ends a pending connection: what it came to, with its secrets and consent URL cleared. */
export async function endConnection(
  db: Kysely<Database>,
  id: string,
  values: Pick<Updateable<ConnectionsTable>, 'status' | 'account_id' | 'account_ids' | 'error' | 'error_code'> & { ended_at: Date },
): Promise<ConnectionRow | undefined> {
  return db
    .updateTable('connections')
    .set({ ...values, state_hash: null, code_verifier: null, consent_link: null, start_hash: null })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
}

export type InstanceAppRow = Selectable<InstanceAppsTable>;

export async function selectInstanceApp(
  db: Kysely<Database>,
  key: Pick<InstanceAppRow, 'platform' | 'instance' | 'redirect_uri'>,
): Promise<InstanceAppRow | undefined> {
  return db
    .selectFrom('instance_apps')
    .selectAll()
    .where('platform', '=', key.platform)
    .where('instance', '=', key.instance)
    .where('redirect_uri', '=', key.redirect_uri)
    .executeTakeFirst();
}

/** Keeps an app registered on an instance; one registered meanwhile by another request is the one kept. */
export async function insertInstanceApp(db: Kysely<Database>, row: Insertable<InstanceAppsTable>): Promise<InstanceAppRow> {
  await db
    .insertInto('instance_apps')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .execute();
  return (await selectInstanceApp(db, row)) as InstanceAppRow;
}

/** Records that an instance app issued a token (the first time only). */
export async function markInstanceAppUsed(db: Kysely<Database>, key: Pick<InstanceAppRow, 'platform' | 'instance' | 'redirect_uri'>, now: Date): Promise<void> {
  await db
    .updateTable('instance_apps')
    .set({ used_at: now })
    .where('platform', '=', key.platform)
    .where('instance', '=', key.instance)
    .where('redirect_uri', '=', key.redirect_uri)
    .where('used_at', 'is', null)
    .execute();
}

/** Deletes the connections that ended, or expired while pending, before `before`; how many. */
export async function deleteConnectionsEndedBefore(db: Kysely<Database>, before: Date): Promise<number> {
  const result = await db
    .deleteFrom('connections')
    .where((eb) => eb.or([eb('ended_at', '<', before), eb.and([eb('status', '=', 'pending'), eb('expires_at', '<', before)])]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Deletes the instance apps registered before `before` that never issued a token and that no
 * pending connection still goes through; how many.
 */
export async function deleteUnusedInstanceApps(db: Kysely<Database>, before: Date, now: Date): Promise<number> {
  const result = await db
    .deleteFrom('instance_apps')
    .where('used_at', 'is', null)
    .where('created_at', '<', before)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('connections')
            .select('connections.id')
            .whereRef('connections.platform', '=', 'instance_apps.platform')
            .whereRef('connections.instance', '=', 'instance_apps.instance')
            .where('connections.status', '=', 'pending')
            .where('connections.expires_at', '>', now),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
