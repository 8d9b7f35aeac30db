import type { Kysely } from 'kysely';
import type { Specification } from '../contract/specification.js';
import type { Database } from '../../db/schema.js';
import type { ApiKeyCache } from '../../domain/api-key-cache.js';
import type { Dependencies } from '../../domain/dependencies.js';

/** What operations need from the running service. */
export interface OperationContext {
  /** The process's dependencies; throws (503 Auth not initialized) until the service has its database. */
  deps(): Dependencies;
  /** The database: `deps().db`. */
  db(): Kysely<Database>;
  /** The database, or undefined while the service is still opening it (what readiness reports). */
  openDatabase(): Kysely<Database> | undefined;
  now(): Date;
  /** Keys looked up a moment ago, when the database announces key changes to this process. */
  apiKeyCache(): ApiKeyCache | undefined;
}

/** What the reference operations serve: the spec the routes came from, and the built HTML page. */
export interface ReferenceContent {
  specification: Specification;
  htmlPath: string;
}
