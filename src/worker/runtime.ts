import { errorName } from '../domain/errors.js';
import type { Kysely } from 'kysely';
import type { Environment } from '../config/environment.js';
import type { Database } from '../data/schema.js';
import type { PublishingDeps, PublishingLog } from '../domain/publishing/engine.js';
import { DEFAULT_PUBLISHING_SETTINGS } from '../domain/publishing/settings.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../domain/webhooks/settings.js';
import { assertUrlAllowed, createGuardedFetch } from '../net/guarded-fetch.js';
import { createPublisherRegistry, type PublisherRegistry } from '../publishers/registry.js';
import { createSandboxPublisher } from '../publishers/sandbox.js';
import { PgBossQueue } from '../queue/publication-queue.js';
import { createCredentialVault, loadSecretKey, type CredentialVault } from '../secrets/credential-vault.js';
import type { MediaStorage } from '../storage/media-storage.js';
import { createWebhookSender } from '../webhook-sender/webhook-sender.js';
import { livePublishers } from './live-publishers.js';

/** What connecting an account needs: the vault, the publishers (to verify credentials) and the SSRF guard. */
export interface AccountParts {
  vault: CredentialVault;
  publishers: PublisherRegistry;
  checkServiceUrl(url: string): void;
}

export async function createAccountParts(env: Environment, db: Kysely<Database>): Promise<AccountParts> {
  const vault = createCredentialVault(await loadSecretKey({ secretKey: env.secretKey, dataDir: env.dataDir }));
  const fetch = createGuardedFetch({ allowPrivateNetwork: env.allowPrivateNetwork });
  return {
    vault,
    publishers: createPublisherRegistry(createSandboxPublisher(db), livePublishers(fetch)),
    checkServiceUrl: (url) => assertUrlAllowed(url, env.allowPrivateNetwork),
  };
}

/** The publishing road's parts for one process, built the same way for `herald serve` and `herald worker`. */
export interface PublishingRuntime extends AccountParts {
  deps: PublishingDeps;
  queue: PgBossQueue;
  stop(): Promise<void>;
}

/**
 * Opens the queue (installing pg-boss's tables on first use) and assembles the road. Only a
 * process that runs a worker supervises the queue (pg-boss's expiry and retry of jobs whose
 * worker died); an API-only process just sends and cancels jobs.
 */
export async function startPublishingRuntime(
  env: Environment,
  db: Kysely<Database>,
  log: PublishingLog,
  options: { supervise: boolean; storage: MediaStorage },
): Promise<PublishingRuntime> {
  const parts = await createAccountParts(env, db);
  const queue = new PgBossQueue(db, {
    supervise: options.supervise,
    onError: (err) => log.error({ errorName: errorName(err) }, 'queue: a poll or maintenance run failed; it will run again'),
  });
  await queue.start();
  return {
    ...parts,
    deps: {
      db,
      queue,
      publishers: parts.publishers,
      vault: parts.vault,
      storage: options.storage,
      settings: { ...DEFAULT_PUBLISHING_SETTINGS, ...env.publishing },
      webhooks: {
        sender: createWebhookSender({ fetch: createGuardedFetch({ allowPrivateNetwork: env.allowPrivateNetwork }), timeoutMs: env.webhooks.timeoutMs }),
        settings: { ...DEFAULT_WEBHOOK_SETTINGS, ...env.webhooks },
      },
      now: () => new Date(),
      log,
    },
    queue,
    stop: () => queue.stop(),
  };
}
