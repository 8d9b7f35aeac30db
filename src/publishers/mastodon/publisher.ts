import { randomUUID } from 'node:crypto';
import { failed, type FailedOutcome } from '../http-outcomes.js';
import { ConnectError, type ConnectInput, type MediaToPublish, type PublishedPart, type Publisher, type PublishOutcome, type PublishRequest } from '../publisher.js';
import { classify, connectError } from './classify.js';
import { createRest, hostOf, type Rest } from './rest.js';

/** What is stored for a Mastodon account: the instance and its access token. */
export interface MastodonCredentials {
  instance: string;
  accessToken: string;
}

/**
 * Mastodon keeps an Idempotency-Key for one hour (docs: methods/statuses); past this margin a call
 * whose outcome is in doubt can no longer be repeated safely.
 */
export const IDEMPOTENCY_WINDOW_MS = 55 * 60_000;

interface Options {
  fetch: typeof globalThis.fetch;
  requestTimeoutMs?: number;
  /** How often to ask whether an upload answered 202 has been processed (masto.js polls every second). */
  mediaPollIntervalMs?: number;
  mediaTimeoutMs?: number;
}

interface Attachment {
  id: string;
  url: string | null;
}

/** Read from the instance's answer, so checked before use. */
interface Status {
  id: unknown;
  url: unknown;
}

/**
 * Publishes to Mastodon with plain fetch: each part is one status with a stable Idempotency-Key
 * (its material key), replies chained with in_reply_to_id, media through /api/v2/media following
 * the 202 and 206 processing states.
 */
export function createMastodonPublisher(options: Options): Publisher<MastodonCredentials> {
  const timeoutMs = options.requestTimeoutMs ?? 30_000;
  const pollMs = options.mediaPollIntervalMs ?? 1_000;
  const mediaTimeoutMs = options.mediaTimeoutMs ?? 60_000;

  return {
    async connect(input: ConnectInput) {
      const instance = originOf(input.instance ?? '');
      const accessToken = input.accessToken ?? '';
      const rest = createRest(options.fetch, instance, accessToken);
      const me = await rest<Record<string, unknown>>({ method: 'GET', path: '/api/v1/accounts/verify_credentials', timeoutMs });
      if (!me.ok) throw connectError(me.failure, instance);
      const { id, acct, username, display_name: displayName } = me.data;
      const handle = typeof acct === 'string' && acct !== '' ? acct : username;
      if (typeof id !== 'string' || id === '' || typeof handle !== 'string' || (displayName !== undefined && displayName !== null && typeof displayName !== 'string')) {
        throw new ConnectError('bad_answer', `${hostOf(instance)} answered an account Herald cannot read (id, acct and display_name must be text)`);
      }
      return {
        platformUserId: mastodonAccountId(instance, id),
        formerPlatformUserId: id,
        username: handle,
        displayName: displayName === undefined || displayName === null || displayName === '' ? null : displayName,
        credentials: { instance, accessToken },
      };
    },

    newPartMaterial: (now) => ({ key: randomUUID(), createdAt: now.toISOString() }),

    async publish(request: PublishRequest<MastodonCredentials>, hooks): Promise<PublishOutcome> {
      const { instance, accessToken } = request.credentials;
      const rest = createRest(options.fetch, instance, accessToken);
      const published: PublishedPart[] = [];
      let first = true;
      try {
        for (const part of request.parts) {
          if (part.published !== null) {
            published.push(part.published);
            continue;
          }
          // Only the first part not yet recorded can have been sent before; the ones after it never were.
          if (first && request.inDoubt && request.now.getTime() - request.firstAttemptAt.getTime() >= IDEMPOTENCY_WINDOW_MS) {
            return {
              kind: 'unknown',
              message: `An earlier attempt may have published this on ${hostOf(instance)}, and the instance no longer remembers it (idempotency keys last an hour); check the account, then retry with includeUnknown=true if it is not there`,
            };
          }
          first = false;
          const mediaIds: string[] = [];
          for (const media of part.media) {
            const uploaded = await upload(rest, media, instance);
            if (typeof uploaded !== 'string') return uploaded;
            mediaIds.push(uploaded);
          }
          const parent = published.at(-1);
          const status = await rest<Status>({
            method: 'POST',
            path: '/api/v1/statuses',
            json: { status: part.text, ...(mediaIds.length > 0 ? { media_ids: mediaIds } : {}), ...(parent === undefined ? {} : { in_reply_to_id: parent.platformPostId }) },
            headers: { 'idempotency-key': part.material.key },
            timeoutMs,
          });
          if (!status.ok) return classify(status.failure, 'status', instance);
          if (typeof status.data.id !== 'string' || (status.data.url !== null && typeof status.data.url !== 'string')) {
            return failed('platform_error', `${hostOf(instance)} answered a status Herald cannot read`, { retryable: true, mayHaveCommitted: true });
          }
          const result = { platformPostId: status.data.id, url: status.data.url, cid: null };
          await hooks.partPublished(part.index, result);
          published.push(result);
        }
      } catch (error) {
        // Media that cannot be read from storage, or anything unforeseen: nothing was sent for this part.
        return failed('system_error', error instanceof Error && error.name === 'MediaUnreadable' ? error.message : 'Herald failed while publishing to Mastodon', { retryable: true });
      }
      return { kind: 'published', parts: published };
    },
  };

  /** Uploads one file and waits until the instance has processed it; its id, or why not. */
  async function upload(rest: Rest, media: MediaToPublish, instance: string): Promise<string | FailedOutcome> {
    const form = new FormData();
    form.append('file', new Blob([await readAll(media)], { type: media.mime }), `${media.id}.${media.mime.split('/')[1] ?? 'bin'}`);
    if (media.altText !== null) form.append('description', media.altText);
    const created = await rest<Attachment>({ method: 'POST', path: '/api/v2/media', form, timeoutMs: timeoutMs * 4 });
    if (!created.ok) return classify(created.failure, 'media', instance);
    if (created.status === 200 && created.data.url !== null) return created.data.id;
    for (const end = Date.now() + mediaTimeoutMs; Date.now() < end; ) {
      await new Promise((resolve) => setTimeout(resolve, pollMs));
      const state = await rest<Attachment>({ method: 'GET', path: `/api/v1/media/${encodeURIComponent(created.data.id)}`, timeoutMs });
      if (!state.ok) return classify(state.failure, 'media', instance);
      if (state.status === 200 && state.data.url !== null) return created.data.id;
    }
    return failed('platform_error', `${hostOf(instance)} did not finish processing ${media.kind} ${media.id} in ${Math.round(mediaTimeoutMs / 1000)} s`, { retryable: true });
  }
}

async function readAll(media: MediaToPublish): Promise<Buffer> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of await media.open()) chunks.push(chunk as Buffer);
  } catch {
    throw Object.assign(new Error(`Media ${media.id} could not be read from storage`), { name: 'MediaUnreadable' });
  }
  return Buffer.concat(chunks);
}

/**
 * An account id is only unique on its instance (small instances number accounts from 1), so the
 * platform account Herald matches reconnects on is the id at the instance's origin.
 */
export function mastodonAccountId(instance: string, id: string): string {
  return `${id}@${instance}`;
}

/** The instance as Herald stores it: scheme, host and port, nothing after. */
function originOf(instance: string): string {
  try {
    return new URL(instance).origin;
  } catch {
    throw new ConnectError('invalid_credentials', 'The instance is not a URL');
  }
}
