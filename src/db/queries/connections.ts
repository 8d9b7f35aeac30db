import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { ConnectionsTable, Database } from '../schema.js';

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
  values: Pick<Updateable<ConnectionsTable>, 'status' | 'account_id' | 'error'> & { ended_at: Date },
): Promise<ConnectionRow | undefined> {
  return db
    .updateTable('connections')
    .set({ ...values, state_hash: null, code_verifier: null, authorization_url: null })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
}
