import { randomUUID } from 'node:crypto';
import type {
  MediaToPublish,
  PartToPublish,
  PublishedPart,
  Publisher,
  PublishHooks,
  PublishOutcome,
  PublishRequest,
  Reconciliation,
} from '../../../domain/ports/publisher.js';
import { postFormUpload } from '../form-upload.js';
import { failed, Halt, reconciliationOfThrown } from '../http-outcomes.js';
import { publishParts } from '../publish-parts.js';
import type { OAuthAdapterOptions, PulledMediaOptions, RestResult } from '../rest-api.js';
import type { OAuthTokens } from '../oauth.js';
import { restSession, type RestSession } from '../oauth-session.js';
import { createPinterestApi } from './api.js';
import { classify } from './classify.js';

export type PinterestCredentials = OAuthTokens;

type Options = OAuthAdapterOptions & PulledMediaOptions;

/** Public image URLs stay valid two days past the attempt. */
const URL_LIFETIME_MS = 48 * 3_600_000;
/** Pinterest documents no pace for a video's processing: looked at every 10 seconds. */
const VIDEO_CHECK_MS = 10_000;
/** How far back, before the attempt began, a pin in doubt is looked for (clock skew). */
const LOOK_BACK_MS = 2 * 60_000;
const PINS_PAGE = 25;

/** What a part records while its video is on its way: Pinterest's media id, and whether its bytes were sent. */
interface VideoProgress {
  mediaId: string;
  uploaded: boolean;
}

/**
 * Publishes pins to a board (fields.boardId) with the caption as description, fields.title and
 * fields.link, and the first image's alt text: an image or 2–5 images Pinterest fetches from this
 * server's public URLs, or a video uploaded to the URL Pinterest gives, `pending` until Pinterest
 * has processed it. No idempotency key: a pin in doubt is looked for on its board first.
 */
export function createPinterestPublisher(options: Options): Publisher<PinterestCredentials> {
  const api = createPinterestApi(options.fetch, options.baseUrl);
  const timeoutMs = options.requestTimeoutMs ?? 30_000;
  const session = (request: PublishRequest<PinterestCredentials>, hooks: PublishHooks<PinterestCredentials>) =>
    restSession({ displayName: 'Pinterest', configName: 'PINTEREST' }, options.oauth, api, request, hooks);

  return {
    newPartMaterial: (now) => ({ key: randomUUID(), createdAt: now.toISOString() }),

    /** The pin an earlier attempt may have made: the board's recent pins with this description and title since the attempt began. */
    async reconcile(request, part, hooks): Promise<Reconciliation> {
      const board = boardOf(request);
      if (board === null) return { kind: 'absent' };
      let listed: RestResult<{ items?: { id?: unknown; description?: unknown; title?: unknown; created_at?: unknown }[] }>;
      try {
        listed = await session(request, hooks).call({
          method: 'GET',
          path: `/v5/boards/${encodeURIComponent(board)}/pins?page_size=${PINS_PAGE}`,
          timeoutMs,
        });
      } catch (error) {
        return reconciliationOfThrown(error);
      }
      if (!listed.ok) {
        const outcome = classify(listed.failure, 'read');
        return outcome.retryable ? { kind: 'unanswered', message: outcome.message } : { kind: 'cannot_tell', message: outcome.message };
      }
      const items = listed.data.items ?? [];
      const since = request.firstAttemptAt.getTime() - LOOK_BACK_MS;
      const title = typeof request.fields.title === 'string' ? request.fields.title : null;
      const match = items
        .filter((pin) => (pin.description ?? '') === part.text && (pin.title ?? null) === title && Date.parse(String(pin.created_at)) >= since)
        .sort((a, b) => Date.parse(String(a.created_at)) - Date.parse(String(b.created_at)))[0];
      if (typeof match?.id === 'string') return { kind: 'found', part: pinOf(match.id) };
      if (items.length < PINS_PAGE) return { kind: 'absent' };
      return {
        kind: 'cannot_tell',
        message:
          'The board has had too many pins since the attempt to tell whether Pinterest holds this one; check the board, then retry with includeUnknown=true if it is not there',
      };
    },

    publish(request, hooks): Promise<PublishOutcome> {
      const pinterest = session(request, hooks);
      return publishParts(request, hooks, 'Pinterest', (part) => pin(pinterest, request, part, hooks));
    },
  };

  async function pin(
    pinterest: RestSession,
    request: PublishRequest<PinterestCredentials>,
    part: PartToPublish,
    hooks: PublishHooks<PinterestCredentials>,
  ): Promise<PublishedPart | PublishOutcome> {
    const board = boardOf(request);
    if (board === null) return failed('user_content', 'A Pinterest pin goes on a board: set fields.boardId to one of the account’s boards');
    if (part.media.length === 0) return failed('user_content', 'A Pinterest pin needs an image or a video');
    const video = part.media.find((m) => m.kind === 'video');
    let source: Record<string, unknown>;
    if (video !== undefined) {
      const ready = await videoReady(pinterest, part, video, hooks);
      if (typeof ready !== 'string') return ready;
      source = { source_type: 'video_id', media_id: ready, cover_image_key_frame_time: 0 };
    } else {
      const expires = new Date(request.now.getTime() + URL_LIFETIME_MS);
      const urls = part.media.map((m) => m.publicUrl(expires));
      for (const url of urls) {
        const problem = options.publicUrlProblem(url);
        if (problem !== null) return failed('system_error', `Pinterest fetches images from this server's public URL, and cannot: ${problem}`);
      }
      source = urls.length === 1 ? { source_type: 'image_url', url: urls[0] } : { source_type: 'multiple_image_urls', items: urls.map((url) => ({ url })) };
    }
    const { fields } = request;
    const created = await pinterest.call<{ id?: unknown }>({
      method: 'POST',
      path: '/v5/pins',
      json: {
        board_id: board,
        description: part.text,
        ...(typeof fields.title === 'string' ? { title: fields.title } : {}),
        ...(typeof fields.link === 'string' ? { link: fields.link } : {}),
        ...(part.media[0]?.altText != null ? { alt_text: part.media[0].altText } : {}),
        media_source: source,
      },
      timeoutMs,
    });
    if (!created.ok) return classify(created.failure, 'pin');
    const id = created.data.id;
    if (typeof id !== 'string' || !/^[0-9]{1,30}$/.test(id))
      return failed('platform_error', 'Pinterest answered a pin Herald cannot read', { retryable: true, mayHaveCommitted: true });
    return pinOf(id);
  }

  /**
   * The video's media id once Pinterest has processed it; pending while it does. The media id is
   * the part's progress before the bytes go, and whether they went after: a look resumes there.
   */
  async function videoReady(
    pinterest: RestSession,
    part: PartToPublish,
    video: MediaToPublish,
    hooks: PublishHooks<PinterestCredentials>,
  ): Promise<string | PublishOutcome> {
    let progress = parseProgress(part.progress);
    if (progress === null || !progress.uploaded) {
      const registered = await pinterest.call<{ media_id?: unknown; upload_url?: unknown; upload_parameters?: unknown }>({
        method: 'POST',
        path: '/v5/media',
        json: { media_type: 'video' },
        timeoutMs,
      });
      if (!registered.ok) return classify(registered.failure, 'media');
      const { media_id: mediaId, upload_url: uploadUrl, upload_parameters: parameters } = registered.data;
      if (typeof mediaId !== 'string' || typeof uploadUrl !== 'string' || typeof parameters !== 'object' || parameters === null)
        return failed('platform_error', 'Pinterest answered a media registration Herald cannot read', { retryable: true });
      progress = { mediaId, uploaded: false };
      await hooks.partProgressed(part.index, JSON.stringify(progress));
      await upload(uploadUrl, parameters as Record<string, unknown>, video);
      progress = { mediaId, uploaded: true };
      await hooks.partProgressed(part.index, JSON.stringify(progress));
    }
    const status = await pinterest.call<{ status?: unknown }>({ method: 'GET', path: `/v5/media/${encodeURIComponent(progress.mediaId)}`, timeoutMs });
    if (!status.ok) return classify(status.failure, 'media');
    if (status.data.status === 'succeeded') return progress.mediaId;
    if (status.data.status === 'failed') {
      await hooks.partProgressed(part.index, null);
      return failed('media_error', 'Pinterest could not process the video');
    }
    return { kind: 'pending', checkAfterMs: VIDEO_CHECK_MS };
  }

  /** Sends the video to the upload URL Pinterest gave, as an HTML form upload: every upload parameter, then the file. */
  async function upload(url: string, parameters: Record<string, unknown>, video: MediaToPublish): Promise<void> {
    const fields = Object.entries(parameters).map(([name, value]) => [name, String(value)] as const);
    const { status } = await postFormUpload(options.fetch, url, fields, { ...video, filename: 'video' }, timeoutMs * 20);
    if (status < 200 || status > 299) throw new Halt(failed('media_error', `Pinterest's upload refused the video (${status})`, { retryable: status >= 500 }));
  }
}

function boardOf(request: PublishRequest<PinterestCredentials>): string | null {
  const board = request.fields.boardId;
  return typeof board === 'string' && board !== '' ? board : null;
}

function pinOf(id: string): PublishedPart {
  return { platformPostId: id, url: `https://www.pinterest.com/pin/${id}/`, cid: null };
}

function parseProgress(progress: string | null): VideoProgress | null {
  if (progress === null) return null;
  try {
    const parsed = JSON.parse(progress) as Partial<VideoProgress>;
    return typeof parsed.mediaId === 'string' ? { mediaId: parsed.mediaId, uploaded: parsed.uploaded === true } : null;
  } catch {
    return null;
  }
}
