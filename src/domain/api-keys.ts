import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { insertApiKey, revokeApiKey, selectApiKeyByHash, selectApiKeysOfUser } from '../db/queries/api-keys.js';
import type { ApiKeyCache } from './api-key-cache.js';
import { DomainError } from './errors.js';
import { isWellFormedId, newId } from './ids.js';
import { requireUser } from './users.js';

/** A recognisable prefix lets secret scanners and people spot a leaked Herald key. */
export const API_KEY_PREFIX = 'hrld_';

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** SHA-256 suffices: the key carries 256 random bits, so there is nothing to brute-force. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export const MISSING_API_KEY = 'Missing API key';
export const INVALID_API_KEY = 'Invalid API key';
export const API_KEY_EXPIRED = 'API key expired';

export interface Caller {
  userId: string;
  keyId: string;
}

/**
 * Resolves an API key (undefined when the caller sent none) to the calling user, or throws an
 * `unauthorized` DomainError. Reading the key out of a request is the HTTP layer's job. A key in
 * `cache` is not looked up again; its expiry and revocation are still checked on every call.
 */
export async function authenticate(db: Kysely<Database>, token: string | undefined, now: Date, cache?: ApiKeyCache): Promise<Caller> {
  if (token === undefined) throw new DomainError('unauthorized', MISSING_API_KEY, undefined, 'missing_api_key');
  if (!token.startsWith(API_KEY_PREFIX)) throw new DomainError('unauthorized', INVALID_API_KEY);
  const hash = hashApiKey(token);
  const row = cache === undefined ? await selectApiKeyByHash(db, hash) : (cache.get(hash) ?? (await cache.lookUp(hash, () => selectApiKeyByHash(db, hash))));
  // The lookup is by hash already; the constant-time compare keeps the final decision free of timing leaks.
  if (!row || !timingSafeEqual(Buffer.from(row.key_hash, 'hex'), Buffer.from(hash, 'hex')) || row.revoked_at !== null) {
    throw new DomainError('unauthorized', INVALID_API_KEY);
  }
  if (row.expires_at !== null && row.expires_at.getTime() <= now.getTime()) {
    throw new DomainError('unauthorized', API_KEY_EXPIRED, undefined, 'api_key_expired');
  }
  return { userId: row.user_id, keyId: row.id };
}

export interface CreatedApiKey {
  id: string;
  /** The plaintext; shown once and never stored. */
  key: string;
  expiresAt: string | null;
}

export async function createApiKey(db: Kysely<Database>, userId: string, expiresAt: Date | null): Promise<CreatedApiKey> {
  await requireUser(db, userId);
  const id = newId('key');
  const key = generateApiKey();
  await insertApiKey(db, { id, user_id: userId, key_hash: hashApiKey(key), expires_at: expiresAt });
  return { id, key, expiresAt: expiresAt?.toISOString() ?? null };
}

export async function revokeKey(db: Kysely<Database>, id: string, now: Date): Promise<{ id: string; revokedAt: string }> {
  const revokedAt = isWellFormedId('key', id) ? await revokeApiKey(db, id, now) : undefined;
  if (revokedAt === undefined) throw new DomainError('not_found', `API key not found: ${id}`);
  return { id, revokedAt: revokedAt.toISOString() };
}

export interface ListedApiKey {
  id: string;
  /** `revoked` wins over `expired`: a revoked key stays refused whatever its expiry. */
  state: 'active' | 'expired' | 'revoked';
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
}

/** A user's keys, oldest first, with their state: what an operator offboarding someone revokes. Never the key itself, which is not kept. */
export async function listApiKeys(db: Kysely<Database>, userId: string, now: Date): Promise<{ keys: ListedApiKey[] }> {
  await requireUser(db, userId);
  const rows = await selectApiKeysOfUser(db, userId);
  return {
    keys: rows.map((row) => ({
      id: row.id,
      state: row.revoked_at !== null ? 'revoked' : row.expires_at !== null && row.expires_at.getTime() <= now.getTime() ? 'expired' : 'active',
      createdAt: row.created_at.toISOString(),
      expiresAt: row.expires_at?.toISOString() ?? null,
      revokedAt: row.revoked_at?.toISOString() ?? null,
    })),
  };
}
