import type { Kysely } from 'kysely';
import type { Environment } from './configuration.js';
import type { Database } from '../../db/schema.js';
import type { PublishingDeps, PublishingLog } from '../../domain/publishing/publication.js';
import { PUBLISHING_LIMITS } from '../../domain/publishing/settings.js';
import { WEBHOOK_LIMITS } from '../../domain/webhooks/settings.js';
import { assertUrlAllowed, createGuardedFetch } from '../../adapters/net/guarded-fetch.js';
import { createPublisherRegistry, type PublisherRegistry } from '../../domain/ports/publisher-registry.js';
import { createSandboxPublisher } from '../../adapters/platforms/sandbox.js';
import { createCredentialVault, loadSecretKey } from '../../adapters/secrets/credential-vault.js';
import type { CredentialVault } from '../../domain/ports/secrets.js';
import { createUrlSigner } from '../../adapters/secrets/url-signer.js';
import type { PublicMediaUrls } from '../../domain/media/public-media.js';
import type { MediaStorage } from '../../domain/ports/media-storage.js';
import { createWebhookSender } from '../../adapters/webhooks/webhook-sender.js';
import { livePublishers } from '../../adapters/platforms/live-publishers.js';

/** What connecting an account needs (the vault, the publishers to verify credentials, the SSRF guard), and public media URLs. */
export interface AccountParts {
  vault: CredentialVault;
  publishers: PublisherRegistry;
  checkServiceUrl(url: string): void;
  publicMedia: PublicMediaUrls;
}

export async function createAccountParts(env: Environment, db: Kysely<Database>): Promise<AccountParts> {
  const secretKey = await loadSecretKey({ secretKey: env.secretKey, dataDir: env.dataDir });
  const vault = createCredentialVault(secretKey);
  const fetch = createGuardedFetch({ allowPrivateNetwork: env.allowPrivateNetwork });
  return {
    vault,
    publishers: createPublisherRegistry(createSandboxPublisher(db), livePublishers(fetch)),
    checkServiceUrl: (url) => assertUrlAllowed(url, env.allowPrivateNetwork),
    publicMedia: { baseUrl: env.publicUrl, signer: createUrlSigner(secretKey) },
  };
}

/** The publishing road's parts for one process, built the same way for `herald serve` and `herald worker`. */
export interface PublishingRuntime extends AccountParts {
  deps: PublishingDeps;
}

/** Assembles the road. It holds nothing open: the posts' and deliveries' rows are its queue. */
export async function createPublishingRuntime(env: Environment, db: Kysely<Database>, log: PublishingLog, options: { storage: MediaStorage }): Promise<PublishingRuntime> {
  const parts = await createAccountParts(env, db);
  return {
    ...parts,
    deps: {
      db,
      publishers: parts.publishers,
      vault: parts.vault,
      storage: options.storage,
      publicMedia: parts.publicMedia,
      settings: { ...PUBLISHING_LIMITS, ...env.publishing },
      webhooks: {
        sender: createWebhookSender({ fetch: createGuardedFetch({ allowPrivateNetwork: env.allowPrivateNetwork }), timeoutMs: env.webhooks.timeoutMs }),
        settings: { ...WEBHOOK_LIMITS, ...env.webhooks },
      },
      now: () => new Date(),
      log,
    },
  };
}
