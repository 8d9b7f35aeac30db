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
import { failed, Halt, readMedia } from '../http-outcomes.js';
import { publishParts } from '../publish-parts.js';
import type { OAuthTokens } from '../oauth.js';
import { restSession, type RestSession } from '../oauth-session.js';
import type { OAuthAdapterOptions, RestResult } from '../rest-api.js';
import { channelOf, createYouTubeApi } from './api.js';
import { classify } from './classify.js';

export type YouTubeCredentials = OAuthTokens;

type Options = OAuthAdapterOptions;

/** Chunks of the resumable upload: a multiple of 256 KiB, as the protocol requires of every chunk but the last. */
const CHUNK_BYTES = 32 * 256 * 1024;
/** YouTube documents no pace for processing: a video is looked at every 30 seconds. */
const PROCESSING_CHECK_MS = 30_000;
/** How far back, before the attempt began, a video in doubt is looked for (clock skew). */
const LOOK_BACK_MS = 2 * 60_000;

/** What the video part records: the upload session before the first byte, whether its last chunk went, and the video once made. */
interface UploadProgress {
  session: string;
  lastChunkSent: boolean;
  videoId: string | null;
}

/**
 * Uploads a video to the account's channel with YoutubeFields (title, privacy, tags, made for
 * kids) and the caption as description, by the resumable upload protocol: the session URI is the
 * part's progress before any byte goes, an interrupted upload resumes from the byte YouTube says
 * it holds, and an upload in doubt is probed before anything is sent again (YouTube makes the
 * video only when the last byte arrives). The post waits as `pending` while YouTube processes the
 * video; then the first comment goes on it.
 */
export function createYouTubePublisher(options: Options): Publisher<YouTubeCredentials> {
  const api = createYouTubeApi(options.fetch, options.baseUrl);
  const timeoutMs = options.requestTimeoutMs ?? 30_000;
  const session = (request: PublishRequest<YouTubeCredentials>, hooks: PublishHooks<YouTubeCredentials>) =>
    restSession({ displayName: 'YouTube', configName: 'YOUTUBE' }, options.oauth, api, request, hooks);

  return {
    newPartMaterial: (now) => ({ key: randomUUID(), createdAt: now.toISOString() }),

    /**
     * The video needs no asking here: publish() probes its session before sending anything. A
     * comment whose answer was lost cannot be told from a new one: a person decides.
     */
    reconcile(_request, part): Promise<Reconciliation> {
      if (part.index === 0) return Promise.resolve({ kind: 'absent' });
      return Promise.resolve({
        kind: 'cannot_tell',
        message:
          'YouTube cannot be asked whether an earlier attempt added this comment; check the video, then retry with includeUnknown=true if it is not there',
      });
    },

    publish(request, hooks): Promise<PublishOutcome> {
      const youtube = session(request, hooks);
      return publishParts(request, hooks, 'YouTube', (part, done) =>
        part.index === 0 ? video(youtube, request, part, hooks) : comment(youtube, request, part, done[0]?.platformPostId ?? ''),
      );
    },
  };

  async function video(
    youtube: RestSession,
    request: PublishRequest<YouTubeCredentials>,
    part: PartToPublish,
    hooks: PublishHooks<YouTubeCredentials>,
  ): Promise<PublishedPart | PublishOutcome> {
    const media = part.media.find((m) => m.kind === 'video');
    if (media === undefined) return failed('user_content', 'A YouTube post is a video: attach one');
    let progress = parseProgress(part.progress);
    const save = async (next: UploadProgress | null) => {
      progress = next;
      await hooks.partProgressed(part.index, next === null ? null : JSON.stringify(next));
    };
    if (progress?.videoId == null) {
      let offset = 0;
      if (progress !== null) {
        const probed = await probe(youtube, progress.session, media.bytes);
        if (probed.kind === 'done') await save({ ...progress, videoId: probed.videoId });
        else if (probed.kind === 'resume') offset = probed.offset;
        else if (progress.lastChunkSent) {
          // The session is gone after its last chunk went: the video may exist. It is looked for among the channel's uploads.
          const found = await findUpload(youtube, request, part);
          if (found === null)
            return {
              kind: 'unknown',
              message: 'YouTube no longer knows the upload session whose last chunk was sent, and the channel shows no such video yet; check the channel',
            };
          await save({ ...progress, videoId: found });
        } else await save(null);
      }
      if (progress === null) await save({ session: await startSession(youtube, request, part, media), lastChunkSent: false, videoId: null });
      if (progress !== null && progress.videoId === null) {
        const uploaded = await upload(youtube, progress, media, offset, save);
        await save({ ...progress, videoId: uploaded });
      }
    }
    const videoId = progress?.videoId;
    if (videoId == null) return failed('platform_error', 'YouTube answered an upload Herald cannot read', { retryable: true });
    return processed(youtube, request, part, videoId, hooks);
  }

  /** Opens a resumable upload session with the video's metadata; its URI. */
  async function startSession(youtube: RestSession, request: PublishRequest<YouTubeCredentials>, part: PartToPublish, media: MediaToPublish): Promise<string> {
    const { fields } = request;
    const started = await youtube.call({
      method: 'POST',
      path: '/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status',
      headers: { 'content-type': 'application/json; charset=UTF-8', 'x-upload-content-length': String(media.bytes), 'x-upload-content-type': media.mime },
      json: {
        snippet: {
          title: titleOf(fields, part.text),
          description: part.text,
          ...(Array.isArray(fields.tags) ? { tags: fields.tags } : {}),
        },
        status: {
          privacyStatus: typeof fields.privacyStatus === 'string' ? fields.privacyStatus : 'public',
          selfDeclaredMadeForKids: fields.selfDeclaredMadeForKids === true,
        },
      },
      timeoutMs,
    });
    if (!started.ok) throw new Halt(classify(started.failure, 'read', request.now));
    const location = started.headers.get('location');
    if (location === null) throw new Halt(failed('platform_error', 'YouTube opened an upload without saying where to send it', { retryable: true }));
    return location;
  }

  /** Sends the bytes from `offset` in chunks; the last one's answer is the video. Its id. */
  async function upload(
    youtube: RestSession,
    progress: UploadProgress,
    media: MediaToPublish,
    from: number,
    save: (next: UploadProgress) => Promise<void>,
  ): Promise<string> {
    let offset = from;
    for (;;) {
      const end = Math.min(offset + CHUNK_BYTES, media.bytes) - 1;
      const last = end === media.bytes - 1;
      // Recorded before the last chunk goes: once it has, a vanished session may still have made the video.
      if (last && !progress.lastChunkSent) await save({ ...progress, lastChunkSent: true });
      const sent = await youtube.call<{ id?: unknown }>({
        method: 'PUT',
        path: progress.session,
        headers: { 'content-range': `bytes ${offset}-${end}/${media.bytes}`, 'content-type': media.mime },
        bytes: await readMedia(media, { start: offset, end }),
        timeoutMs: timeoutMs * 4,
      });
      const step = stepOf(sent);
      if (step.kind === 'done') return step.videoId;
      if (step.kind === 'resume') {
        offset = step.offset;
        continue;
      }
      if (!sent.ok) throw new Halt(classify(sent.failure, last ? 'commit' : 'upload', new Date()));
      throw new Halt(failed('platform_error', 'YouTube answered an upload Herald cannot read', { retryable: true }));
    }
  }

  /** Asks a session how much it holds (an empty PUT with `Content-Range: bytes *` over the total). */
  async function probe(
    youtube: RestSession,
    uri: string,
    total: number,
  ): Promise<{ kind: 'done'; videoId: string } | { kind: 'resume'; offset: number } | { kind: 'gone' }> {
    const asked = await youtube.call<{ id?: unknown }>({
      method: 'PUT',
      path: uri,
      headers: { 'content-range': `bytes */${total}` },
      bytes: Buffer.alloc(0),
      timeoutMs,
    });
    const step = stepOf(asked);
    if (step.kind !== 'other') return step;
    if (!asked.ok && asked.failure.kind === 'http' && (asked.failure.status === 404 || asked.failure.status === 410)) return { kind: 'gone' };
    if (!asked.ok) throw new Halt(classify(asked.failure, 'read', new Date()));
    return { kind: 'gone' };
  }

  /** Where YouTube is with the video: published once processed; pending while it processes; failed or rejected as YouTube says. */
  async function processed(
    youtube: RestSession,
    request: PublishRequest<YouTubeCredentials>,
    part: PartToPublish,
    videoId: string,
    hooks: PublishHooks<YouTubeCredentials>,
  ): Promise<PublishedPart | PublishOutcome> {
    const read = await youtube.call<{ items?: { status?: { uploadStatus?: unknown; failureReason?: unknown; rejectionReason?: unknown } }[] }>({
      method: 'GET',
      path: `/youtube/v3/videos?part=status,processingDetails&id=${encodeURIComponent(videoId)}`,
      timeoutMs,
    });
    if (!read.ok) return classify(read.failure, 'read', request.now);
    const status = read.data.items?.[0]?.status;
    if (status === undefined) return { kind: 'pending', checkAfterMs: PROCESSING_CHECK_MS };
    if (status.uploadStatus === 'processed')
      return { platformPostId: videoId, url: `https://www.youtube.com/watch?v=${encodeURIComponent(videoId)}`, cid: null };
    if (status.uploadStatus === 'failed' || status.uploadStatus === 'rejected' || status.uploadStatus === 'deleted') {
      await hooks.partProgressed(part.index, null);
      const reason = [status.failureReason, status.rejectionReason, status.uploadStatus].find((r): r is string => typeof r === 'string');
      const why = reason ?? 'no reason given';
      return status.uploadStatus === 'failed'
        ? failed('media_error', `YouTube could not process the video (${why})`)
        : failed('user_content', `YouTube ${status.uploadStatus === 'deleted' ? 'deleted' : 'rejected'} the video (${why})`);
    }
    return { kind: 'pending', checkAfterMs: PROCESSING_CHECK_MS };
  }

  async function comment(
    youtube: RestSession,
    request: PublishRequest<YouTubeCredentials>,
    part: PartToPublish,
    videoId: string,
  ): Promise<PublishedPart | PublishOutcome> {
    const made = await youtube.call<{ id?: unknown }>({
      method: 'POST',
      path: '/youtube/v3/commentThreads?part=snippet',
      json: { snippet: { videoId, topLevelComment: { snippet: { textOriginal: part.text } } } },
      timeoutMs,
    });
    if (!made.ok) return classify(made.failure, 'commit', request.now);
    if (typeof made.data.id !== 'string')
      return failed('platform_error', 'YouTube answered a comment Herald cannot read', { retryable: true, mayHaveCommitted: true });
    return {
      platformPostId: made.data.id,
      url: `https://www.youtube.com/watch?v=${encodeURIComponent(videoId)}&lc=${encodeURIComponent(made.data.id)}`,
      cid: null,
    };
  }

  /** A video the vanished session may have made: the channel's uploads with this title since the attempt began. */
  async function findUpload(youtube: RestSession, request: PublishRequest<YouTubeCredentials>, part: PartToPublish): Promise<string | null> {
    const mine = await channelOf((call) => youtube.call(call));
    if (!mine.ok || mine.uploads === null)
      throw new Halt(failed('platform_error', `YouTube's channel could not be read: ${mine.ok ? 'no uploads playlist' : mine.message}`, { retryable: true }));
    const listed = await youtube.call<{ items?: { snippet?: { title?: unknown; publishedAt?: unknown; resourceId?: { videoId?: unknown } } }[] }>({
      method: 'GET',
      path: `/youtube/v3/playlistItems?part=snippet,contentDetails&maxResults=25&playlistId=${encodeURIComponent(mine.uploads)}`,
      timeoutMs,
    });
    if (!listed.ok) throw new Halt(classify(listed.failure, 'read', request.now));
    const since = request.firstAttemptAt.getTime() - LOOK_BACK_MS;
    const title = titleOf(request.fields, part.text);
    const match = (listed.data.items ?? []).find((item) => item.snippet?.title === title && Date.parse(String(item.snippet.publishedAt)) >= since);
    const id = match?.snippet?.resourceId?.videoId;
    return typeof id === 'string' ? id : null;
  }
}

/** What an upload's answer says: the video made, where to go on from, or something else. */
function stepOf(result: RestResult<{ id?: unknown }>): { kind: 'done'; videoId: string } | { kind: 'resume'; offset: number } | { kind: 'other' } {
  if (result.ok) return typeof result.data.id === 'string' ? { kind: 'done', videoId: result.data.id } : { kind: 'other' };
  const { failure } = result;
  if (failure.kind !== 'http' || failure.status !== 308) return { kind: 'other' };
  const range = /^bytes=0-([0-9]+)$/.exec(failure.headers.get('range') ?? '');
  return { kind: 'resume', offset: range === null ? 0 : Number(range[1]) + 1 };
}

/** The video's title: fields.title, else the caption's first line (YouTube needs one: at most 100 characters, no < or >). */
function titleOf(fields: Readonly<Record<string, unknown>>, caption: string): string {
  if (typeof fields.title === 'string') return fields.title;
  const line = (caption.split('\n')[0] ?? '').replace(/[<>]/g, '').trim();
  return line === '' ? 'Video' : [...line].slice(0, 100).join('');
}

function parseProgress(progress: string | null): UploadProgress | null {
  if (progress === null) return null;
  try {
    const parsed = JSON.parse(progress) as Partial<UploadProgress>;
    if (typeof parsed.session !== 'string') return null;
    return { session: parsed.session, lastChunkSent: parsed.lastChunkSent === true, videoId: typeof parsed.videoId === 'string' ? parsed.videoId : null };
  } catch {
    return null;
  }
}
