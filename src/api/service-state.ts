import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { ApiKeyCache } from '../domain/api-key-cache.js';
import type { MediaSettings, OperationContext, PublishingParts } from './kit/context.js';
import { HttpError } from './http-error.js';

/** The message the interface gives for requests that arrive before the service has its database. */
export const NOT_READY = 'Auth not initialized';

/**
 * The service listens before its database is open (opening and migrating can take seconds), so
 * early requests get a clear 503 instead of waiting or failing obscurely.
 */
export class ServiceState implements OperationContext {
  #db: Kysely<Database> | undefined;
  #publishing: PublishingParts | undefined;
  #apiKeyCache: ApiKeyCache | undefined;

  constructor(readonly media: MediaSettings) {}

  attach(db: Kysely<Database>, publishing: PublishingParts, apiKeyCache?: ApiKeyCache): void {
    this.#publishing = publishing;
    this.#apiKeyCache = apiKeyCache;
    this.#db = db;
  }

  apiKeyCache(): ApiKeyCache | undefined {
    return this.#apiKeyCache;
  }

  db(): Kysely<Database> {
    if (this.#db === undefined) throw new HttpError(503, NOT_READY);
    return this.#db;
  }

  openDatabase(): Kysely<Database> | undefined {
    return this.#db;
  }

  publishing(): PublishingParts {
    if (this.#publishing === undefined) throw new HttpError(503, NOT_READY);
    return this.#publishing;
  }

  now(): Date {
    return new Date();
  }
}
