import type { Kysely } from 'kysely';
import { selectAccountIdsReachableBy, type AccountRow } from '../../db/queries/accounts.js';
import type { Database } from '../../db/schema.js';

/**
 * The accounts among these that the user can no longer post to: neither theirs nor an
 * organization's they are a member of. Access is checked when a post is saved and again each
 * time it is about to go out, since a membership may have ended in between. A user's own
 * accounts need no lookup, so a post on them costs no statement.
 */
export async function accountsOutOfReach(
  db: Kysely<Database>,
  userId: string,
  accounts: readonly Pick<AccountRow, 'id' | 'owner_user_id'>[],
): Promise<Set<string>> {
  const others = accounts.filter((a) => a.owner_user_id !== userId).map((a) => a.id);
  const reachable = new Set(await selectAccountIdsReachableBy(db, userId, others));
  return new Set(others.filter((id) => !reachable.has(id)));
}
