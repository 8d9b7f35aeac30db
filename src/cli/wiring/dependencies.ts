import { PUBLIC_MEDIA_STALL_MS } from '../../domain/media/public-media.js';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { assertUrlAllowed, createGuardedFetch } from '../../adapters/net/guarded-fetch.js';
import { livePlatforms } from '../../adapters/platforms/live-publishers.js';
import { createSandboxPublisher } from '../../adapters/platforms/sandbox.js';
import { FfprobeMediaProbe } from '../../adapters/probe/ffprobe-media-probe.js';
import { createCredentialVault, loadSecretKey } from '../../adapters/secrets/credential-vault.js';
import { createUrlSigner } from '../../adapters/secrets/url-signer.js';
import { LocalDiskStorage } from '../../adapters/storage/local-disk-storage.js';
import type { S3Location } from '../../adapters/storage/s3-location.js';
import type { S3Storage } from '../../adapters/storage/s3-storage.js';
import { createWebhookSender } from '../../adapters/webhooks/webhook-sender.js';
import type { Database } from '../../db/schema.js';
import type { Dependencies, DomainLog } from '../../domain/dependencies.js';
import type { MediaStorage } from '../../domain/ports/media-storage.js';
import { createPublisherRegistry } from '../../domain/ports/publisher-registry.js';
import { PUBLISHING_LIMITS } from '../../domain/publishing/settings.js';
import { WEBHOOK_LIMITS } from '../../domain/webhooks/settings.js';
import type { Environment } from './configuration.js';

/**
 * Where a process keeps uploaded media: the data folder's `media/`, or the bucket HERALD_MEDIA_URL
 * names (uploads are staged in the data folder's `media/staging` either way).
 */
export async function mediaStorageOf(env: Pick<Environment, 'dataDir' | 'mediaStore' | 's3ForcePathStyle'>): Promise<MediaStorage> {
  return env.mediaStore === undefined ? localMediaStorageOf(env) : s3MediaStorageOf(env, env.mediaStore);
}

/** The data folder's `media/`: where files live without HERALD_MEDIA_URL, and what `herald media migrate` moves from. */
export function localMediaStorageOf(env: Pick<Environment, 'dataDir'>): LocalDiskStorage {
  return new LocalDiskStorage(mediaFolderOf(env));
}

export async function s3MediaStorageOf(env: Pick<Environment, 'dataDir' | 's3ForcePathStyle'>, location: S3Location): Promise<S3Storage> {
  // Loaded only by a process that uses a bucket: the AWS SDK would slow every other start.
  const { S3Storage } = await import('../../adapters/storage/s3-storage.js');
  return S3Storage.create({ location, stagingRoot: mediaFolderOf(env), client: { forcePathStyle: env.s3ForcePathStyle } });
}

function mediaFolderOf(env: Pick<Environment, 'dataDir'>): string {
  return join(env.dataDir, 'media');
}

/**
 * The one bag of adapters and settings a process runs on, built the same way for `herald serve`,
 * `herald worker` and the CLI. It holds nothing open: the posts' and deliveries' rows are the queue.
 */
export async function createDependencies(
  env: Environment,
  db: Kysely<Database>,
  log: DomainLog,
  given: Partial<Pick<Dependencies, 'storage' | 'probe'>> = {},
): Promise<Dependencies> {
  const secretKey = await loadSecretKey({ secretKey: env.secretKey, dataDir: env.dataDir });
  // Every call to a user-given or platform host goes through the SSRF guard.
  const fetch = createGuardedFetch({ allowPrivateNetwork: env.allowPrivateNetwork });
  const live = livePlatforms(fetch, env.platforms, { allowPrivateNetwork: env.allowPrivateNetwork });
  return {
    db,
    vault: createCredentialVault(secretKey),
    publishers: createPublisherRegistry(createSandboxPublisher(db), live.publishers),
    oauth: live.oauth,
    instanceOAuth: live.instanceOAuth,
    callbackUrl: `${env.publicUrl}/oauth/callback`,
    consentStartUrl: `${env.publicUrl}/oauth/start`,
    returnUrlOrigins: env.returnUrlOrigins,
    storage: given.storage ?? (await mediaStorageOf(env)),
    probe: given.probe ?? new FfprobeMediaProbe(),
    maxUploadBytes: env.maxUploadBytes,
    publicMedia: { baseUrl: env.publicUrl, signer: createUrlSigner(secretKey), stallMs: PUBLIC_MEDIA_STALL_MS },
    checkServiceUrl: (url) => assertUrlAllowed(url, env.allowPrivateNetwork),
    settings: { ...PUBLISHING_LIMITS, ...env.publishing },
    webhooks: {
      sender: createWebhookSender({ fetch, timeoutMs: env.webhooks.timeoutMs }),
      settings: { ...WEBHOOK_LIMITS, ...env.webhooks },
    },
    now: () => new Date(),
    log,
  };
}
