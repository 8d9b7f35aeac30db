import type { Kysely } from 'kysely';
import { deleteMembership, insertOrganization, organizationExists, upsertMembership } from '../db/queries/organizations.js';
import { insertUser, userExists } from '../db/queries/users.js';
import type { Database, MembershipRole } from '../db/schema.js';
import { DomainError } from './errors.js';
import { isWellFormedId, newId } from './ids.js';
import { requireStorableText } from './text.js';

export async function createUser(db: Kysely<Database>, name: string | null): Promise<{ id: string }> {
  if (name !== null) requireStorableText(name, 'User name');
  const id = newId('usr');
  await insertUser(db, { id, name });
  return { id };
}

/** Creates an organization; with `ownerId`, that user is its first member, as its owner. */
export async function createOrganization(db: Kysely<Database>, name: string, ownerId: string | null = null): Promise<{ id: string }> {
  if (name.trim() === '') throw new DomainError('invalid_request', 'Organization name must not be empty');
  requireStorableText(name, 'Organization name');
  if (ownerId !== null) await requireUser(db, ownerId);
  const id = newId('org');
  await db.transaction().execute(async (trx) => {
    await insertOrganization(trx, { id, name });
    if (ownerId !== null) await upsertMembership(trx, id, ownerId, 'owner');
  });
  return { id };
}

/**
 * Adds a member (they can then post to the organization's accounts), as an owner when `owner` is
 * set (owners may also disconnect those accounts). Adding a member again keeps their role unless
 * `owner` makes them an owner.
 */
export async function addMember(
  db: Kysely<Database>,
  orgId: string,
  userId: string,
  owner = false,
): Promise<{ orgId: string; userId: string; role: MembershipRole }> {
  await requireOrganization(db, orgId);
  await requireUser(db, userId);
  const role = await upsertMembership(db, orgId, userId, owner ? 'owner' : null);
  return { orgId, userId, role };
}

/**
 * Removes a member: from then on a post of theirs naming the organization's accounts is refused,
 * and those of their posts' targets that have not gone out fail (the publishing road checks again).
 */
export async function removeMember(db: Kysely<Database>, orgId: string, userId: string): Promise<{ orgId: string; userId: string; role: MembershipRole }> {
  await requireOrganization(db, orgId);
  await requireUser(db, userId);
  const role = await deleteMembership(db, orgId, userId);
  if (role === undefined) throw new DomainError('not_found', `User ${userId} is not a member of ${orgId}`);
  return { orgId, userId, role };
}

/** A malformed id (one holding NUL, say) cannot exist, so it is not looked up: it is not found. */
export async function requireUser(db: Kysely<Database>, userId: string): Promise<void> {
  if (!isWellFormedId('usr', userId) || !(await userExists(db, userId))) throw new DomainError('not_found', `User not found: ${userId}`);
}

export async function requireOrganization(db: Kysely<Database>, orgId: string): Promise<void> {
  if (!isWellFormedId('org', orgId) || !(await organizationExists(db, orgId))) {
    throw new DomainError('not_found', `Organization not found: ${orgId}`);
  }
}
