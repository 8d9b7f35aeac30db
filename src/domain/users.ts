import type { Kysely } from 'kysely';
import { insertMembership, insertOrganization, organizationExists } from '../data/queries/organizations.js';
import { insertUser, userExists } from '../data/queries/users.js';
import type { Database } from '../data/schema.js';
import { DomainError } from './errors.js';
import { isWellFormedId, newId } from './ids.js';
import { requireStorableText } from './text.js';

export async function createUser(db: Kysely<Database>, name: string | null): Promise<{ id: string }> {
  if (name !== null) requireStorableText(name, 'User name');
  const id = newId('usr');
  await insertUser(db, { id, name });
  return { id };
}

export async function createOrganization(db: Kysely<Database>, name: string): Promise<{ id: string }> {
  if (name.trim() === '') throw new DomainError('invalid_request', 'Organization name must not be empty');
  requireStorableText(name, 'Organization name');
  const id = newId('org');
  await insertOrganization(db, { id, name });
  return { id };
}

export async function addMember(db: Kysely<Database>, orgId: string, userId: string): Promise<{ orgId: string; userId: string }> {
  await requireOrganization(db, orgId);
  await requireUser(db, userId);
  await insertMembership(db, orgId, userId);
  return { orgId, userId };
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
