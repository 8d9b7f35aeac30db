import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { ApiKeyCache } from '../domain/api-key-cache.js';
import type { Dependencies } from '../domain/dependencies.js';
import type { OperationContext } from './kit/context.js';
import { HttpError } from './http-error.js';

/** The message the interface gives for requests that arrive before the service has its database. */
export const NOT_READY = 'Auth not initialized';

/**
 * The service listens before its database is open (opening and migrating can take seconds), so
 * early requests get a clear 503 instead of waiting or failing obscurely.
 */
export class ServiceState implements OperationContext {
  #deps: Dependencies | undefined;
  #apiKeyCache: ApiKeyCache | undefined;

  attach(deps: Dependencies, apiKeyCache?: ApiKeyCache): void {
    this.#apiKeyCache = apiKeyCache;
    this.#deps = deps;
  }

  apiKeyCache(): ApiKeyCache | undefined {
    return this.#apiKeyCache;
  }

  deps(): Dependencies {
    if (this.#deps === undefined) throw new HttpError(503, NOT_READY);
    return this.#deps;
  }

  db(): Kysely<Database> {
    return this.deps().db;
  }

  openDatabase(): Kysely<Database> | undefined {
    return this.#deps?.db;
  }

  now(): Date {
    return new Date();
  }
}
