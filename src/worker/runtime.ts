import type { Kysely } from 'kysely';
import type { Environment } from '../config/environment.js';
import type { Database } from '../data/schema.js';
import type { PublishingDeps, PublishingLog } from '../domain/publishing/engine.js';
import { DEFAULT_PUBLISHING_SETTINGS } from '../domain/publishing/settings.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../domain/webhooks/settings.js';
import { assertUrlAllowed, createGuardedFetch } from '../net/guarded-fetch.js';
import { createPublisherRegistry, type PublisherRegistry } from '../publishers/registry.js';
import { createSandboxPublisher } from '../publishers/sandbox.js';
import { createCredentialVault, loadSecretKey, type CredentialVault } from '../secrets/credential-vault.js';
import { createUrlSigner } from '../secrets/url-signer.js';
import type { PublicMediaUrls } from '../domain/media/public-media.js';
import type { MediaStorage } from '../storage/media-storage.js';
import { createWebhookSender } from '../webhook-sender/webhook-sender.js';
import { livePublishers } from './live-publishers.js';

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
      settings: { ...DEFAULT_PUBLISHING_SETTINGS, ...env.publishing },
      webhooks: {
        sender: createWebhookSender({ fetch: createGuardedFetch({ allowPrivateNetwork: env.allowPrivateNetwork }), timeoutMs: env.webhooks.timeoutMs }),
        settings: { ...DEFAULT_WEBHOOK_SETTINGS, ...env.webhooks },
      },
      now: () => new Date(),
      log,
    },
  };
}
