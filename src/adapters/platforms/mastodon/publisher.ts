import { randomUUID } from 'node:crypto';
import { failed, outcomeOfThrown, readMedia, type FailedOutcome } from '../http-outcomes.js';
import {
  ConnectError,
  type ConnectInput,
  type MediaToPublish,
  type PartToPublish,
  type PublishedPart,
  type CredentialPublisher,
  type PublishHooks,
  type PublishOutcome,
  type PublishRequest,
  type Reconciliation,
} from '../../../domain/ports/publisher.js';
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
export function createMastodonPublisher(options: Options): CredentialPublisher<MastodonCredentials> {
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
      if (
        typeof id !== 'string' ||
        id === '' ||
        typeof handle !== 'string' ||
        (displayName !== undefined && displayName !== null && typeof displayName !== 'string')
      ) {
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

    // The instance is the part of the id after its `@` (mastodonAccountId); an id stored by an earlier version has none.
    hostOf: (platformUserId) => {
      const at = platformUserId?.indexOf('@') ?? -1;
      return platformUserId === null || at === -1 ? null : hostOf(platformUserId.slice(at + 1));
    },

    newPartMaterial: (now) => ({ key: randomUUID(), createdAt: now.toISOString() }),

    /**
     * A status an earlier attempt may have posted is looked for among the account's latest: one
     * written since that attempt began, replying to the same parent, with the same text. Within
     * the hour the instance keeps an Idempotency-Key, sending again is safe whatever the list
     * shows; past it, only a list that reaches back before the attempt can say the status is absent.
     */
    async reconcile(request, part): Promise<Reconciliation> {
      const { instance, accessToken } = request.credentials;
      const rest = createRest(options.fetch, instance, accessToken);
      const keyHolds = request.now.getTime() - request.firstAttemptAt.getTime() < IDEMPOTENCY_WINDOW_MS;
      const cannotTell = `An earlier attempt may have published this on ${hostOf(instance)}, and the instance no longer remembers it (idempotency keys last an hour); check the account, then retry with includeUnknown=true if it is not there`;
      const accountId = (request.account.platformUserId ?? '').split('@')[0] ?? '';
      const listed = await rest<unknown[]>({
        method: 'GET',
        path: `/api/v1/accounts/${encodeURIComponent(accountId)}/statuses?limit=${TIMELINE_PAGE}&exclude_reblogs=true`,
        timeoutMs,
      });
      if (!listed.ok) {
        if (keyHolds) return { kind: 'absent' };
        const transient =
          listed.failure.kind === 'network' ||
          listed.failure.kind === 'too_large' ||
          (listed.failure.kind === 'http' && (listed.failure.status >= 500 || listed.failure.status === 429));
        return transient ? { kind: 'unanswered', message: classify(listed.failure, 'media', instance).message } : { kind: 'cannot_tell', message: cannotTell };
      }
      const statuses = listed.data.filter(isListedStatus);
      const since = request.firstAttemptAt.getTime() - CLOCK_SKEW_MS;
      const parent = request.parts.find((p) => p.index === part.index - 1)?.published?.platformPostId ?? null;
      const matches = statuses.filter((s) => Date.parse(s.created_at) >= since && s.in_reply_to_id === parent && plainText(s.content) === collapse(part.text));
      // The earliest match: a person may have posted the same text again since, by hand.
      const match = matches.sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at))[0];
      if (match !== undefined) return { kind: 'found', part: { platformPostId: match.id, url: match.url, cid: null } };
      const reachesBack = statuses.length < TIMELINE_PAGE || statuses.some((s) => Date.parse(s.created_at) < since);
      return reachesBack || keyHolds ? { kind: 'absent' } : { kind: 'cannot_tell', message: cannotTell };
    },

    async publish(request: PublishRequest<MastodonCredentials>, hooks): Promise<PublishOutcome> {
      const { instance, accessToken } = request.credentials;
      const rest = createRest(options.fetch, instance, accessToken);
      const published: PublishedPart[] = [];
      try {
        for (const part of request.parts) {
          if (part.published !== null) {
            published.push(part.published);
            continue;
          }
          const media = await mediaOf(rest, part, request.now, hooks, instance);
          if (!Array.isArray(media)) return media;
          const parent = published.at(-1);
          const status = await rest<Status>({
            method: 'POST',
            path: '/api/v1/statuses',
            json: {
              status: part.text,
              ...(media.length > 0 ? { media_ids: media } : {}),
              ...(parent === undefined ? {} : { in_reply_to_id: parent.platformPostId }),
            },
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
        return outcomeOfThrown(error, 'Mastodon');
      }
      return { kind: 'published', parts: published };
    },
  };

  /**
   * The part's media ids once the instance has processed them all. Uploads answered 202 are
   * processing: their ids are recorded as the part's progress and the outcome is pending, looked
   * at again at the instance's pace (masto.js asks every second), never waited for in a loop.
   */
  async function mediaOf(
    rest: Rest,
    part: PartToPublish,
    now: Date,
    hooks: PublishHooks<MastodonCredentials>,
    instance: string,
  ): Promise<string[] | PublishOutcome> {
    const progress = parseProgress(part.progress);
    if (progress === null) {
      const ids: string[] = [];
      let processing = false;
      for (const media of part.media) {
        const uploaded = await upload(rest, media, instance);
        if ('kind' in uploaded) return uploaded;
        ids.push(uploaded.id);
        processing ||= !uploaded.ready;
      }
      if (!processing) return ids;
      await hooks.partProgressed(part.index, JSON.stringify({ mediaIds: ids, since: now.getTime() } satisfies MediaProgress));
      return { kind: 'pending', checkAfterMs: pollMs };
    }
    for (const id of progress.mediaIds) {
      const state = await rest<Attachment>({ method: 'GET', path: `/api/v1/media/${encodeURIComponent(id)}`, timeoutMs });
      if (!state.ok) return classify(state.failure, 'media', instance);
      if (state.status === 200 && state.data.url !== null) continue;
      if (now.getTime() - progress.since < mediaTimeoutMs) return { kind: 'pending', checkAfterMs: pollMs };
      // Given up: a retry uploads the media again rather than waiting on these.
      await hooks.partProgressed(part.index, null);
      return failed('platform_error', `${hostOf(instance)} did not finish processing media ${id} in ${Math.round(mediaTimeoutMs / 1000)} s`, {
        retryable: true,
      });
    }
    return progress.mediaIds;
  }

  /** Uploads one file: its id, and whether the instance has processed it already (200) or is still at it (202). */
  async function upload(rest: Rest, media: MediaToPublish, instance: string): Promise<{ id: string; ready: boolean } | FailedOutcome> {
    const form = new FormData();
    form.append('file', new Blob([await readMedia(media)], { type: media.mime }), `${media.id}.${media.mime.split('/')[1] ?? 'bin'}`);
    if (media.altText !== null) form.append('description', media.altText);
    const created = await rest<Attachment>({ method: 'POST', path: '/api/v2/media', form, timeoutMs: timeoutMs * 4 });
    if (!created.ok) return classify(created.failure, 'media', instance);
    return { id: created.data.id, ready: created.status === 200 && created.data.url !== null };
  }
}

/** Statuses asked for when looking for one in doubt: the most one page gives (docs: accounts/#statuses). */
const TIMELINE_PAGE = 40;
/** How far the instance's clock may be behind Herald's. */
const CLOCK_SKEW_MS = 5 * 60_000;

interface ListedStatus {
  id: string;
  created_at: string;
  in_reply_to_id: string | null;
  url: string | null;
  content: string;
}

function isListedStatus(value: unknown): value is ListedStatus {
  if (typeof value !== 'object' || value === null) return false;
  const s = value as Record<string, unknown>;
  return (
    typeof s.id === 'string' &&
    typeof s.created_at === 'string' &&
    typeof s.content === 'string' &&
    (s.in_reply_to_id === null || typeof s.in_reply_to_id === 'string') &&
    (s.url === null || typeof s.url === 'string')
  );
}

/** A status's HTML as the text it was posted from, near enough to compare: tags dropped, entities read, spaces collapsed. */
function plainText(html: string): string {
  const text = html
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/p>\s*<p>/gi, '\n\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(amp|lt|gt|quot|#39|apos);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'" })[name] ?? '');
  return collapse(text);
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** What a part records while the instance processes its media. */
interface MediaProgress {
  mediaIds: string[];
  /** When the first upload of them was answered, in ms since the epoch. */
  since: number;
}

function parseProgress(progress: string | null): MediaProgress | null {
  if (progress === null) return null;
  const parsed = JSON.parse(progress) as MediaProgress;
  return Array.isArray(parsed.mediaIds) && typeof parsed.since === 'number' ? parsed : null;
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
