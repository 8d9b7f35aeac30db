import type { Kysely } from 'kysely';
import type { Database } from '../data/schema.js';
import type { MediaStorage } from '../storage/media-storage.js';

/** What operations need from the running service. */
export interface OperationContext {
  /** The database; throws a `not_ready` DomainError until the service has one. */
  db(): Kysely<Database>;
  now(): Date;
  readonly media: MediaSettings;
}

export interface MediaSettings {
  storage: MediaStorage;
  maxUploadBytes: number;
}
