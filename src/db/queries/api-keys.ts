import type { Kysely, Selectable } from 'kysely';
import { compiledOnce } from '../compiled-query.js';
import type { ApiKeysTable, Database } from '../schema.js';

export type ApiKeyRow = Selectable<ApiKeysTable>;

export async function insertApiKey(db: Kysely<Database>, key: { id: string; user_id: string; key_hash: string; expires_at: Date | null }): Promise<void> {
  await db.insertInto('api_keys').values(key).execute();
}

/** The channel on which the database announces each change to a key, with its id (migration 0006). */
export const API_KEY_CHANGES_CHANNEL = 'herald_api_keys';

export type ApiKeyLookup = Pick<ApiKeyRow, 'id' | 'user_id' | 'key_hash' | 'expires_at' | 'revoked_at'>;

const apiKeyByHash = compiledOnce((db, keyHash: string) =>
  db.selectFrom('api_keys').select(['id', 'user_id', 'key_hash', 'expires_at', 'revoked_at']).where('key_hash', '=', keyHash),
);

/** Every request's first statement, unless the key was looked up a moment ago. */
export async function selectApiKeyByHash(db: Kysely<Database>, keyHash: string): Promise<ApiKeyLookup | undefined> {
  return (await apiKeyByHash(db, keyHash))[0];
}

/** A user's keys, oldest first, without their hashes. */
export async function selectApiKeysOfUser(db: Kysely<Database>, userId: string): Promise<Pick<ApiKeyRow, 'id' | 'created_at' | 'expires_at' | 'revoked_at'>[]> {
  return db
    .selectFrom('api_keys')
    .select(['id', 'created_at', 'expires_at', 'revoked_at'])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Sets revoked_at once; revoking again returns the first revocation time. */
export async function revokeApiKey(db: Kysely<Database>, id: string, at: Date): Promise<Date | undefined> {
  await db.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).execute();
  const row = await db.selectFrom('api_keys').select('revoked_at').where('id', '=', id).executeTakeFirst();
  return row?.revoked_at ?? undefined;
}
