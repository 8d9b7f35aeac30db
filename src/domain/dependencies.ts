import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { PublicMediaUrls } from './media/public-media.js';
import type { MediaProbe } from './ports/media-probe.js';
import type { InstanceConsent, OAuthConsent } from './ports/oauth.js';
import type { MediaStorage } from './ports/media-storage.js';
import type { PublisherRegistry } from './ports/publisher-registry.js';
import type { CredentialVault } from './ports/secrets.js';
import type { WebhookSender } from './ports/webhook-sender.js';
import type { PublishingSettings } from './publishing/settings.js';
import type { WebhookSettings } from './webhooks/settings.js';

/**
 * Everything the domain is given from outside, built once per process by the wiring
 * (src/cli/wiring/dependencies.ts) and handed to the API and the worker alike. A domain function
 * names the slice it uses (`Pick<Dependencies, …>`), so a test gives it only that.
 */
export interface Dependencies {
  db: Kysely<Database>;
  vault: CredentialVault;
  publishers: PublisherRegistry;
  storage: MediaStorage;
  probe: MediaProbe;
  /** The largest media upload accepted, in bytes. */
  maxUploadBytes: number;
  /** Where the media's public URLs point, and their signer, for platforms that pull media by URL. */
  publicMedia: PublicMediaUrls;
  /** The consent flow of each platform whose app this server has; a platform missing here is not configured. */
  oauth: Readonly<Partial<Record<string, OAuthConsent>>>;
  /** The consent flow of each platform whose instances authorize on their own (Mastodon). */
  instanceOAuth: Readonly<Partial<Record<string, InstanceConsent>>>;
  /** Where platforms send people back from their consent pages: `{HERALD_PUBLIC_URL}/oauth/callback`. */
  callbackUrl: string;
  /** Herald's consent links, `{HERALD_PUBLIC_URL}/oauth/start`, followed by a one-time token. */
  consentStartUrl: string;
  /** The origins a connection's `returnUrl` may point to (HERALD_RETURN_URL_ORIGINS); empty: none. */
  returnUrlOrigins: readonly string[];
  /** The SSRF guard's early check of a user-given service URL (it checks again as it connects). */
  checkServiceUrl(url: string): void;
  settings: PublishingSettings;
  webhooks: { sender: WebhookSender; settings: WebhookSettings };
  now(): Date;
  log: DomainLog;
}

/** The slice of a pino logger the domain writes to; never given a secret, a credential or a URL. */
export interface DomainLog {
  info(fields: object, message: string): void;
  error(fields: object, message: string): void;
}
