import type { Kysely } from 'kysely';
import { insertMembership, insertOrganization, organizationExists } from '../data/queries/organizations.js';
import { insertUser, userExists } from '../data/queries/users.js';
import type { Database } from '../data/schema.js';
import { DomainError } from './errors.js';
import { newId } from './ids.js';

export async function createUser(db: Kysely<Database>, name: string | null): Promise<{ id: string }> {
  const id = newId('usr');
  await insertUser(db, { id, name });
  return { id };
}

export async function createOrganization(db: Kysely<Database>, name: string): Promise<{ id: string }> {
  if (name.trim() === '') throw new DomainError('invalid_request', 'Organization name must not be empty');
  const id = newId('org');
  await insertOrganization(db, { id, name });
  return { id };
}

export async function addMember(db: Kysely<Database>, orgId: string, userId: string): Promise<{ orgId: string; userId: string }> {
  if (!(await organizationExists(db, orgId))) throw new DomainError('not_found', `Organization not found: ${orgId}`);
  if (!(await userExists(db, userId))) throw new DomainError('not_found', `User not found: ${userId}`);
  await insertMembership(db, orgId, userId);
  return { orgId, userId };
}
