import type { Kysely, Transaction } from 'kysely';
import {
  completeKey,
  deleteExpiredKeys,
  deleteKeyInProgress,
  insertKeyIfAbsent,
  retakeKey,
  selectKeyForUpdate,
  type IdempotencyScope,
} from '../db/queries/idempotency.js';
import type { Database } from '../db/schema.js';
import type { CredentialVault } from './ports/secrets.js';

export type { IdempotencyScope };

/**
 * What an operation runs last inside the transaction of its work, with its answer: the answer kept
 * for the request's Idempotency-Key, so that a COMMIT whose acknowledgement was lost is replayed by
 * a retry, never done again.
 */
export type KeepWithWork<T> = (trx: Transaction<Database>, answer: T) => Promise<void>;

/** How long a key remembers its request and answer. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60_000;
/** How long a request in progress holds its key before a retry may take it over (its process is taken as gone). */
export const IDEMPOTENCY_LOCK_MS = 60_000;

export type KeyClaim =
  /** The key is this request's: do the work, then complete or release it. */
  | { kind: 'claimed' }
  /** The same request was answered already: answer the same. */
  | { kind: 'replay'; statusCode: number; body: string }
  /** The same request is still running elsewhere; retry after this many seconds. */
  | { kind: 'in_progress'; retryAfterSeconds: number }
  /** The key belongs to a different request. */
  | { kind: 'mismatch' };

/**
 * Decides what a request with an Idempotency-Key does, taking the key when it is free. `claim` is
 * the request's own random token, chosen before the call so that a claim whose answer was lost
 * (the database went away mid-statement) can still be freed by that request alone. `vault` opens a
 * kept answer that was sealed.
 */
export async function claimIdempotencyKey(
  db: Kysely<Database>,
  scope: IdempotencyScope,
  claim: string,
  fingerprint: string,
  now: Date,
  vault: CredentialVault,
): Promise<KeyClaim> {
  const lockedUntil = new Date(now.getTime() + IDEMPOTENCY_LOCK_MS);
  const expiresAt = new Date(now.getTime() + IDEMPOTENCY_TTL_MS);
  if (await insertKeyIfAbsent(db, scope, claim, fingerprint, lockedUntil, expiresAt)) return { kind: 'claimed' };
  return db.transaction().execute(async (trx): Promise<KeyClaim> => {
    const row = await selectKeyForUpdate(trx, scope);
    // Gone between the two statements (expired and purged, or released): take it.
    const expired = row === undefined || row.expires_at <= now;
    if (!expired && row.fingerprint !== fingerprint) return { kind: 'mismatch' };
    if (!expired && row.state === 'done' && row.status_code !== null && row.body !== null) {
      return { kind: 'replay', statusCode: row.status_code, body: row.sealed ? vault.open<SealedAnswer>(row.body).body : row.body };
    }
    if (!expired && row.locked_until > now)
      return { kind: 'in_progress', retryAfterSeconds: Math.max(1, Math.ceil((row.locked_until.getTime() - now.getTime()) / 1000)) };
    if (row === undefined) {
      if (!(await insertKeyIfAbsent(trx, scope, claim, fingerprint, lockedUntil, expiresAt))) return { kind: 'in_progress', retryAfterSeconds: 1 };
    } else {
      await retakeKey(trx, scope, claim, fingerprint, lockedUntil, expiresAt);
    }
    return { kind: 'claimed' };
  });
}

/** Keeps the answer for retries with the same key; sealed with `sealWith` when given (the answer carries a secret). */
export async function completeIdempotencyKey(
  db: Kysely<Database>,
  scope: IdempotencyScope,
  claim: string,
  statusCode: number,
  body: string,
  sealWith?: CredentialVault,
): Promise<void> {
  const sealed = sealWith?.seal({ body } satisfies SealedAnswer);
  await completeKey(db, scope, claim, statusCode, sealed ?? body, sealed !== undefined);
}

interface SealedAnswer {
  body: string;
}

/** Frees the key: the request failed on Herald's side, so a retry should do the work. */
export async function releaseIdempotencyKey(db: Kysely<Database>, scope: IdempotencyScope, claim: string): Promise<void> {
  await deleteKeyInProgress(db, scope, claim);
}

export async function purgeExpiredIdempotencyKeys(db: Kysely<Database>, now: Date): Promise<number> {
  return deleteExpiredKeys(db, now);
}
