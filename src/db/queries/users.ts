import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

export async function insertUser(db: Kysely<Database>, user: { id: string; name: string | null }): Promise<void> {
  await db.insertInto('users').values(user).execute();
}

export async function userExists(db: Kysely<Database>, id: string): Promise<boolean> {
  const row = await db.selectFrom('users').select('id').where('id', '=', id).executeTakeFirst();
  return row !== undefined;
}

export async function countUsers(db: Kysely<Database>): Promise<number> {
  const { count } = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(count);
}
