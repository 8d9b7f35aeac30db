import type { Kysely } from 'kysely';
import type { Database } from '../data/schema.js';

/** What operations need from the running service. */
export interface OperationContext {
  /** The database; throws a `not_ready` DomainError until the service has one. */
  db(): Kysely<Database>;
  now(): Date;
}
