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
 * Takes the pending connection a state belongs to, once: the state is cleared in the same
 * statement, so a second callback with it finds nothing, whichever comes first.
 */
export async function takeConnectionByState(db: Kysely<Database>, stateHash: string): Promise<ConnectionRow | undefined> {
  return db
    .updateTable('connections')
    .set({ state_hash: null })
    .where('state_hash', '=', stateHash)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
}

/** Ends a pending connection: what it came to, with its secrets and consent URL cleared. */
export async function endConnection(
  db: Kysely<Database>,
  id: string,
  values: Pick<Updateable<ConnectionsTable>, 'status' | 'account_id' | 'account_ids' | 'error' | 'error_code'> & { ended_at: Date },
): Promise<ConnectionRow | undefined> {
  return db
    .updateTable('connections')
    .set({ ...values, state_hash: null, code_verifier: null, authorization_url: null })
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
