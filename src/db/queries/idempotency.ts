import type { Kysely, Selectable } from 'kysely';
import type { Database, IdempotencyKeysTable } from '../schema.js';

export type IdempotencyRow = Selectable<IdempotencyKeysTable>;

export interface IdempotencyScope {
  userId: string;
  operationId: string;
  key: string;
}

/** Takes the key for a request in progress; false when a row for it exists already. */
export async function insertKeyIfAbsent(
  db: Kysely<Database>,
  scope: IdempotencyScope,
  claim: string,
  fingerprint: string,
  lockedUntil: Date,
  expiresAt: Date,
): Promise<boolean> {
  const inserted = await db
    .insertInto('idempotency_keys')
    .values({
      user_id: scope.userId,
      operation_id: scope.operationId,
      key: scope.key,
      fingerprint,
      claim,
      state: 'in_progress',
      locked_until: lockedUntil,
      expires_at: expiresAt,
    })
    .onConflict((oc) => oc.columns(['user_id', 'operation_id', 'key']).doNothing())
    .returning('key')
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function selectKeyForUpdate(db: Kysely<Database>, scope: IdempotencyScope): Promise<IdempotencyRow | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('user_id', '=', scope.userId)
    .where('operation_id', '=', scope.operationId)
    .where('key', '=', scope.key)
    .forUpdate()
    .executeTakeFirst();
}

/** Starts the key afresh for a new request in progress (it had expired, or its holder is gone). */
export async function retakeKey(
  db: Kysely<Database>,
  scope: IdempotencyScope,
  claim: string,
  fingerprint: string,
  lockedUntil: Date,
  expiresAt: Date,
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ fingerprint, claim, state: 'in_progress', status_code: null, body: null, sealed: false, locked_until: lockedUntil, expires_at: expiresAt })
    .where('user_id', '=', scope.userId)
    .where('operation_id', '=', scope.operationId)
    .where('key', '=', scope.key)
    .execute();
}

/**
 * Keeps the answer of the request that holds the key (by its claim: one taken over since keeps
 * nothing); `sealed` when `body` is the answer sealed.
 */
export async function completeKey(
  db: Kysely<Database>,
  scope: IdempotencyScope,
  claim: string,
  statusCode: number,
  body: string,
  sealed: boolean,
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ state: 'done', status_code: statusCode, body, sealed })
    .where((eb) => eb.and(heldBy(scope, claim)))
    .execute();
}

/** Frees a key whose request ended without an answer worth keeping, if that request still holds it. */
export async function deleteKeyInProgress(db: Kysely<Database>, scope: IdempotencyScope, claim: string): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where((eb) => eb.and(heldBy(scope, claim)))
    .execute();
}

/** The key's row while this claim's request holds it. */
function heldBy(scope: IdempotencyScope, claim: string) {
  return { user_id: scope.userId, operation_id: scope.operationId, key: scope.key, claim, state: 'in_progress' as const };
}

/** Deletes keys past their expiry; how many. */
export async function deleteExpiredKeys(db: Kysely<Database>, now: Date): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
