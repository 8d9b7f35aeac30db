import type { Kysely } from 'kysely';
import type { Specification } from '../contract/specification.js';
import type { Database } from '../data/schema.js';
import type { MediaProbe } from '../probe/media-probe.js';
import type { MediaStorage } from '../storage/media-storage.js';

/** What operations need from the running service. */
export interface OperationContext {
  /** The database; throws (503 Auth not initialized) until the service has one. */
  db(): Kysely<Database>;
  now(): Date;
  readonly media: MediaSettings;
}

export interface MediaSettings {
  storage: MediaStorage;
  probe: MediaProbe;
  maxUploadBytes: number;
}

/** What the reference operations serve: the spec the routes came from, and the built HTML page. */
export interface ReferenceContent {
  specification: Specification;
  htmlPath: string;
}
