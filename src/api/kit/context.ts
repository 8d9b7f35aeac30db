import type { Kysely } from 'kysely';
import type { Specification } from '../contract/specification.js';
import type { Database } from '../../db/schema.js';
import type { ApiKeyCache } from '../../domain/api-key-cache.js';
import type { PublicMediaUrls } from '../../domain/media/public-media.js';
import type { MediaProbe } from '../../domain/ports/media-probe.js';
import type { PublisherRegistry } from '../../domain/ports/publisher-registry.js';
import type { CredentialVault } from '../../domain/ports/secrets.js';
import type { MediaStorage } from '../../domain/ports/media-storage.js';

/** What operations need from the running service. */
export interface OperationContext {
  /** The database; throws (503 Auth not initialized) until the service has one. */
  db(): Kysely<Database>;
  /** The database, or undefined while the service is still opening it (what readiness reports). */
  openDatabase(): Kysely<Database> | undefined;
  now(): Date;
  /** Keys looked up a moment ago, when the database announces key changes to this process. */
  apiKeyCache(): ApiKeyCache | undefined;
  readonly media: MediaSettings;
  /** The publishing road's parts; throws (503 Auth not initialized) until the service has them. */
  publishing(): PublishingParts;
}

export interface PublishingParts {
  vault: CredentialVault;
  publishers: PublisherRegistry;
  /** The SSRF guard's early check of a user-given service URL. */
  checkServiceUrl(url: string): void;
  /** Where public media URLs point, and their signer. */
  publicMedia: PublicMediaUrls;
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
