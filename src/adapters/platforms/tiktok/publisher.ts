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
import { chunkRanges } from '../chunked-upload.js';
import { failed, Halt, readMedia } from '../http-outcomes.js';
import type { OAuthTokens } from '../oauth.js';
import { restSession, type RestSession } from '../oauth-session.js';
import { publishParts } from '../publish-parts.js';
import { createTikTokApi, envelope, type TikTokAnswer } from './api.js';
import { classify, failedPublish } from './classify.js';
import type { OAuthAdapterOptions, PulledMediaOptions } from '../rest-api.js';

export type TikTokCredentials = OAuthTokens;

type Options = OAuthAdapterOptions & PulledMediaOptions;

const MB = 1024 * 1024;
/** 10 MB chunks, the remainder joining the last (a file under 10 MB is one chunk): within TikTok's 5–64 MB, and never the whole file in memory. */
const CHUNK_BYTES = 10 * MB;
/** TikTok: about half a minute to process 512 MB; looked at every 15 seconds. */
const STATUS_CHECK_MS = 15_000;
const URL_LIFETIME_MS = 48 * 3_600_000;

/** What a part records: the publish TikTok opened, and (video) whether its last chunk went. */
interface PublishProgress {
  publishId: string;
  lastChunkSent: boolean;
}

type CreatorInfo = {
  privacy_level_options?: unknown;
  comment_disabled?: unknown;
  duet_disabled?: unknown;
  stitch_disabled?: unknown;
  max_video_post_duration_sec?: unknown;
};

/**
 * Direct posts to TikTok: the creator's info is read first and a post that does not fit it is
 * refused with TikTok's own words; a video goes by FILE_UPLOAD in chunks (never pull-from-URL: a
 * pull whose answer is lost leaves nothing to ask about); photos by pull from this server's public
 * URLs. The publish id is the part's progress at once, and the post is `pending` until the status
 * says PUBLISH_COMPLETE or FAILED (a FAILED status comes beside `error.code: "ok"`).
 */
export function createTikTokPublisher(options: Options): Publisher<TikTokCredentials> {
  const api = createTikTokApi(options.fetch, options.baseUrl);
  const timeoutMs = options.requestTimeoutMs ?? 30_000;
  const session = (request: PublishRequest<TikTokCredentials>, hooks: PublishHooks<TikTokCredentials>) =>
    restSession({ displayName: 'TikTok', configName: 'TIKTOK' }, options.oauth, api, request, hooks);
  const call = async <T>(tiktok: RestSession, path: string, json: unknown): Promise<TikTokAnswer<T>> =>
    envelope<T>(await tiktok.call({ method: 'POST', path, json, headers: { 'content-type': 'application/json; charset=UTF-8' }, timeoutMs }));

  return {
    newPartMaterial: (now) => ({ key: randomUUID(), createdAt: now.toISOString() }),

    /**
     * A publish TikTok opened is asked about by publish() through its id. Photos are pulled by the
     * init itself: one whose answer was lost left no id to ask about, so a person decides.
     */
    reconcile(_request, part): Promise<Reconciliation> {
      if (part.progress !== null || part.media.some((m) => m.kind === 'video')) return Promise.resolve({ kind: 'absent' });
      return Promise.resolve({
        kind: 'cannot_tell',
        message:
          'TikTok gave no publish id for photos whose answer was lost, so it cannot be asked about them; check the account, then retry with includeUnknown=true if the post is not there',
      });
    },

    publish(request, hooks): Promise<PublishOutcome> {
      const tiktok = session(request, hooks);
      return publishParts(request, hooks, 'TikTok', (part) => post(tiktok, request, part, hooks));
    },
  };

  async function post(tiktok: RestSession, request: PublishRequest<TikTokCredentials>, part: PartToPublish, hooks: PublishHooks<TikTokCredentials>) {
    let progress = parseProgress(part.progress);
    const save = async (next: PublishProgress | null) => {
      progress = next;
      await hooks.partProgressed(part.index, next === null ? null : JSON.stringify(next));
    };
    const video = part.media.find((m) => m.kind === 'video');
    if (progress !== null) {
      // A video whose last chunk never went, or never arrived whole, publishes nothing: it is sent again under a new publish.
      const state = video === undefined || progress.lastChunkSent ? await status(tiktok, request, progress.publishId, video?.bytes) : 'incomplete';
      if (state !== 'incomplete') return settle(state, part, hooks);
      await save(null);
    }
    const fit = await checkCreator(tiktok, request, video);
    if (fit !== null) return fit;
    const publishId = video === undefined ? await pullPhotos(tiktok, request, part) : await openUpload(tiktok, request, part, video, save);
    if (typeof publishId !== 'string') return publishId;
    // A pull's init is its commit: what it opened is asked about from now on, never sent again.
    if (video === undefined) await save({ publishId, lastChunkSent: true });
    const state = await status(tiktok, request, publishId, video?.bytes);
    return settle(state === 'incomplete' ? { kind: 'pending', checkAfterMs: STATUS_CHECK_MS } : state, part, hooks);
  }

  /** The post as the creator's settings allow it, or the user_content outcome saying what does not fit. */
  async function checkCreator(
    tiktok: RestSession,
    request: PublishRequest<TikTokCredentials>,
    video: MediaToPublish | undefined,
  ): Promise<PublishOutcome | null> {
    const info = await call<CreatorInfo>(tiktok, '/v2/post/publish/creator_info/query/', {});
    if (!info.ok) return classify(info, 'other', request.now);
    const { fields } = request;
    const offered = Array.isArray(info.data.privacy_level_options) ? info.data.privacy_level_options.map(String) : [];
    const privacy = typeof fields.privacyLevel === 'string' ? fields.privacyLevel : '';
    if (!offered.includes(privacy))
      return failed('user_content', `TikTok does not offer privacyLevel ${privacy || '(none)'} to this creator; it offers ${offered.join(', ') || 'none'}`);
    const max = info.data.max_video_post_duration_sec;
    if (video?.durationMs != null && typeof max === 'number' && video.durationMs > max * 1000)
      return failed('user_content', `The video lasts ${Math.ceil(video.durationMs / 1000)} s; this creator may post at most ${max} s on TikTok`);
    for (const [field, setting, what] of [
      ['disableComments', 'comment_disabled', 'comments'],
      ['disableDuet', 'duet_disabled', 'duets'],
      ['disableStitch', 'stitch_disabled', 'stitches'],
    ] as const)
      if (fields[field] === false && info.data[setting] === true)
        return failed('user_content', `The creator has turned ${what} off on TikTok, so a post cannot turn them on (${field}: false)`);
    return null;
  }

  function postInfo(request: PublishRequest<TikTokCredentials>, part: PartToPublish, isVideo: boolean): Record<string, unknown> {
    const { fields } = request;
    return {
      privacy_level: fields.privacyLevel,
      ...(typeof fields.disableComments === 'boolean' ? { disable_comment: fields.disableComments } : {}),
      ...(isVideo && typeof fields.disableDuet === 'boolean' ? { disable_duet: fields.disableDuet } : {}),
      ...(isVideo && typeof fields.disableStitch === 'boolean' ? { disable_stitch: fields.disableStitch } : {}),
      ...(isVideo ? { title: part.text } : { description: part.text }),
    };
  }

  /** Opens a FILE_UPLOAD publish (its id recorded at once) and sends the chunks in order; its id. */
  async function openUpload(
    tiktok: RestSession,
    request: PublishRequest<TikTokCredentials>,
    part: PartToPublish,
    video: MediaToPublish,
    save: (next: PublishProgress) => Promise<void>,
  ): Promise<string | PublishOutcome> {
    const ranges = chunkRanges(video.bytes, CHUNK_BYTES, { remainderJoinsLast: true });
    const chunkSize = ranges.length === 1 ? video.bytes : CHUNK_BYTES;
    const opened = await call<{ publish_id?: unknown; upload_url?: unknown }>(tiktok, '/v2/post/publish/video/init/', {
      post_info: postInfo(request, part, true),
      source_info: { source: 'FILE_UPLOAD', video_size: video.bytes, chunk_size: chunkSize, total_chunk_count: ranges.length },
    });
    if (!opened.ok) return classify(opened, 'other', request.now);
    const { publish_id: publishId, upload_url: uploadUrl } = opened.data;
    if (typeof publishId !== 'string' || typeof uploadUrl !== 'string')
      return failed('platform_error', 'TikTok answered an upload Herald cannot read', { retryable: true });
    await save({ publishId, lastChunkSent: false });
    for (const [i, range] of ranges.entries()) {
      const last = i === ranges.length - 1;
      // Recorded before the last chunk goes: once it has, TikTok may publish whatever this attempt hears.
      if (last) await save({ publishId, lastChunkSent: true });
      const sent = await tiktok.call({
        method: 'PUT',
        path: uploadUrl,
        headers: { 'content-type': video.mime, 'content-range': `bytes ${range.start}-${range.end}/${video.bytes}` },
        bytes: await readMedia(video, range),
        timeoutMs: timeoutMs * 4,
      });
      if (!sent.ok) throw new Halt(classify(envelope(sent) as Exclude<TikTokAnswer<unknown>, { ok: true }>, last ? 'commit' : 'other', request.now));
    }
    return publishId;
  }

  /** Photos TikTok pulls from this server's public URLs: the init is the commit. */
  async function pullPhotos(tiktok: RestSession, request: PublishRequest<TikTokCredentials>, part: PartToPublish): Promise<string | PublishOutcome> {
    if (part.media.length === 0) return failed('user_content', 'A TikTok post needs a video or photos');
    const expires = new Date(request.now.getTime() + URL_LIFETIME_MS);
    const urls = part.media.map((m) => m.publicUrl(expires));
    for (const url of urls) {
      const problem = options.publicUrlProblem(url);
      if (problem !== null) return failed('system_error', `TikTok pulls photos from this server's public URL, and cannot: ${problem}`);
    }
    const opened = await call<{ publish_id?: unknown }>(tiktok, '/v2/post/publish/content/init/', {
      post_info: postInfo(request, part, false),
      source_info: { source: 'PULL_FROM_URL', photo_cover_index: 0, photo_images: urls },
      post_mode: 'DIRECT_POST',
      media_type: 'PHOTO',
    });
    if (!opened.ok) return classify(opened, 'commit', request.now);
    const publishId = opened.data.publish_id;
    if (typeof publishId !== 'string')
      return failed('platform_error', 'TikTok answered a photo post Herald cannot read', { retryable: true, mayHaveCommitted: true });
    return publishId;
  }

  /**
   * What TikTok says of a publish: done (with the post, when TikTok names it), failed, still at
   * work, never started, or (a video) still waiting for bytes it will not get: `incomplete`.
   */
  async function status(
    tiktok: RestSession,
    request: PublishRequest<TikTokCredentials>,
    publishId: string,
    videoBytes?: number,
  ): Promise<PublishedPart | PublishOutcome | 'not_started' | 'incomplete'> {
    const read = await call<{ status?: unknown; fail_reason?: unknown; publicaly_available_post_id?: unknown; uploaded_bytes?: unknown }>(
      tiktok,
      '/v2/post/publish/status/fetch/',
      { publish_id: publishId },
    );
    if (!read.ok) return classify(read, 'other', request.now);
    const { status: state, fail_reason: reason, publicaly_available_post_id: ids, uploaded_bytes: uploaded } = read.data;
    if (state === 'PROCESSING_UPLOAD' && videoBytes !== undefined && typeof uploaded === 'number' && uploaded < videoBytes) return 'incomplete';
    if (state === 'PUBLISH_COMPLETE' || state === 'SEND_TO_USER_INBOX') {
      // The ids are int64 numbers, which JSON.parse rounds: read from the answer's text as sent.
      const postId = Array.isArray(ids) && ids.length > 0 ? (/"publicaly_available_post_id"\s*:\s*\[\s*"?([0-9]+)/.exec(read.text)?.[1] ?? null) : null;
      // TikTok names the post only once moderation is done (hours for a public post): until then the publish id stands for it.
      return postId === null
        ? { platformPostId: publishId, url: null, cid: null }
        : { platformPostId: postId, url: `https://www.tiktok.com/@${encodeURIComponent(request.account.username)}/video/${postId}`, cid: null };
    }
    if (state === 'FAILED') return failedPublish(typeof reason === 'string' ? reason : null);
    if (state === 'PROCESSING_UPLOAD' || state === 'PROCESSING_DOWNLOAD') return { kind: 'pending', checkAfterMs: STATUS_CHECK_MS };
    return 'not_started';
  }

  /** A publish's state as this look's outcome; a failure clears the progress, so a retry starts anew. */
  async function settle(state: PublishedPart | PublishOutcome | 'not_started', part: PartToPublish, hooks: PublishHooks<TikTokCredentials>) {
    if (state === 'not_started') return { kind: 'pending', checkAfterMs: STATUS_CHECK_MS } as const;
    if ('kind' in state && state.kind === 'failed') await hooks.partProgressed(part.index, null);
    return state;
  }
}

function parseProgress(progress: string | null): PublishProgress | null {
  if (progress === null) return null;
  try {
    const parsed = JSON.parse(progress) as Partial<PublishProgress>;
    return typeof parsed.publishId === 'string' ? { publishId: parsed.publishId, lastChunkSent: parsed.lastChunkSent === true } : null;
  } catch {
    return null;
  }
}
