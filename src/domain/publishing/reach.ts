import type { Kysely } from 'kysely';
import { selectAccountIdsReachableBy, type AccountRow } from '../../db/queries/accounts.js';
import type { Database } from '../../db/schema.js';

/** Why a target fails when its post's owner can no longer post to its account (they left its organization). */
export const OWNER_LOST_ACCESS = "The post's owner no longer has access to this account";

/**
 * The accounts among these that the user can no longer post to: neither theirs nor an
 * organization's they are a member of. Access is checked when a post is saved and again each
 * time it is about to go out, since a membership may have ended in between. A user's own
 * accounts need no lookup, so a post on them costs no statement.
 */
export async function accountsOutOfReach(db: Kysely<Database>, userId: string, accounts: readonly Pick<AccountRow, 'id' | 'owner_user_id'>[]): Promise<Set<string>> {
  const others = accounts.filter((a) => a.owner_user_id !== userId).map((a) => a.id);
  const reachable = new Set(await selectAccountIdsReachableBy(db, userId, others));
  return new Set(others.filter((id) => !reachable.has(id)));
}
