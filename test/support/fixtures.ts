import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { connectAccount } from '../../src/domain/accounts.js';
import { createApiKey } from '../../src/domain/api-keys.js';
import { addMedia, type MediaFactsInput } from '../../src/domain/media/add-media.js';
import { createUser } from '../../src/domain/users.js';
import { noteSecret } from './run-log.js';

/** Builds test data through the same domain functions the CLI uses. */

export interface TestUser {
  userId: string;
  key: string;
}

export async function userWithKey(db: Kysely<Database>, name = 'Tester'): Promise<TestUser> {
  const { id: userId } = await createUser(db, name);
  const { key } = await createApiKey(db, userId, null);
  noteSecret(key);
  return { userId, key };
}

export async function account(db: Kysely<Database>, userId: string, platform = 'x', username = 'someone'): Promise<string> {
  return (await connectAccount(db, { platform, username, displayName: null, owner: { userId } })).id;
}

export const JPEG_4_5: MediaFactsInput = { kind: 'image', mime: 'image/jpeg', bytes: 400_000, width: 1080, height: 1350, durationMs: null };

export async function media(db: Kysely<Database>, userId: string, facts: MediaFactsInput = JPEG_4_5): Promise<string> {
  return (await addMedia(db, userId, facts)).id;
}

/** How many posts the user has in the database, whatever the API answered. */
export async function postCount(db: Kysely<Database>, userId: string): Promise<number> {
  return (await db.selectFrom('posts').select('id').where('user_id', '=', userId).execute()).length;
}

export function inOneHour(from = new Date()): string {
  return new Date(from.getTime() + 3_600_000).toISOString();
}
