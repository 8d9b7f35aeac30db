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
import { chunkRanges, uploadInChunks } from '../chunked-upload.js';
import { failed, Halt, outcomeOfThrown, readMedia, type FailedOutcome, reconciliationOfThrown } from '../http-outcomes.js';
import type { OAuthTokens } from '../oauth.js';
import { restSession, type RestSession } from '../oauth-session.js';
import { createXApi, type XResult } from './api.js';
import { classify } from './classify.js';
import type { OAuthAdapterOptions } from '../rest-api.js';

/** What is stored for an X account: its OAuth 2.0 tokens (the refresh token is single use: every refresh rotates it). */
export type XCredentials = OAuthTokens;

type Options = OAuthAdapterOptions;

/** Video is appended in segments of this size (peers use 1 MB); X takes at most 1,000 segments. */
const SEGMENT_BYTES = 4 * 1024 * 1024;
/** How far back, before the attempt began, a post in doubt is looked for (clock skew). */
const LOOK_BACK_MS = 2 * 60_000;
/** The most posts one read of the user's timeline returns (max_results). */
const TIMELINE_PAGE = 100;

/**
 * Publishes to X through API v2 with plain fetch (the SDKs hard-code X's hosts): each part is one
 * post; thread parts and the first comment reply to the part before; images by simple upload with
 * their alt text; a video by chunked upload, `pending` while X processes it. X has no idempotency
 * key, so a post whose creation is in doubt is looked for on the account before it is sent again.
 */
export function createXPublisher(options: Options): Publisher<XCredentials> {
  const api = createXApi(options.fetch, options.baseUrl);
  const timeoutMs = options.requestTimeoutMs ?? 30_000;
  const session = (request: PublishRequest<XCredentials>, hooks: PublishHooks<XCredentials>) =>
    restSession({ displayName: 'X', configName: 'X' }, options.oauth, api, request, hooks);

  return {
    newPartMaterial: (now) => ({ key: randomUUID(), createdAt: now.toISOString() }),

    /**
     * The post an earlier attempt may have created is looked for among the account's posts since
     * that attempt began: the same text (links compared without their URLs, which X rewrites to
     * t.co) replying to the same parent. The earliest match is the one; none in a page that is not
     * full means absent.
     */
    async reconcile(request, part, hooks): Promise<Reconciliation> {
      const userId = request.account.platformUserId ?? '';
      const since = new Date(request.firstAttemptAt.getTime() - LOOK_BACK_MS).toISOString();
      let listed: XResult<{ data?: unknown[]; meta?: { result_count?: unknown } }>;
      try {
        listed = await session(request, hooks).call({
          method: 'GET',
          path: `/2/users/${encodeURIComponent(userId)}/tweets?start_time=${encodeURIComponent(since)}&max_results=${TIMELINE_PAGE}&tweet.fields=created_at,text,referenced_tweets`,
          timeoutMs,
        });
      } catch (error) {
        return reconciliationOfThrown(error);
      }
      if (!listed.ok) {
        const outcome = classify(listed.failure, 'read');
        return outcome.retryable
          ? { kind: 'unanswered', message: outcome.message }
          : { kind: 'cannot_tell', message: `X could not be asked whether an earlier attempt published this (${outcome.message}); check the account` };
      }
      const posts = (listed.data.data ?? []).filter(isListedPost);
      const parent = request.parts.find((p) => p.index === part.index - 1)?.published?.platformPostId ?? null;
      const wanted = comparable(part.text);
      const match = posts
        .filter((post) => comparable(post.text) === wanted && repliedTo(post) === parent)
        .sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at))[0];
      if (match !== undefined) return { kind: 'found', part: published(request, match.id) };
      if (posts.length < TIMELINE_PAGE) return { kind: 'absent' };
      return {
        kind: 'cannot_tell',
        message:
          'The account has posted too much since the attempt to tell whether X holds this post; check the account, then retry with includeUnknown=true if it is not there',
      };
    },

    async publish(request, hooks): Promise<PublishOutcome> {
      const x = session(request, hooks);
      const done: PublishedPart[] = [];
      try {
        for (const part of request.parts) {
          if (part.published !== null) {
            done.push(part.published);
            continue;
          }
          const media = await mediaOf(x, part, hooks);
          if (!Array.isArray(media)) return media;
          const parent = done.at(-1)?.platformPostId;
          const body = {
            text: part.text,
            ...(media.length > 0 ? { media: { media_ids: media } } : {}),
            ...(parent === undefined ? postFields(request.fields) : { reply: { in_reply_to_tweet_id: parent } }),
          };
          const created = await x.call<{ data?: { id?: unknown } }>({ method: 'POST', path: '/2/tweets', json: body, timeoutMs });
          if (!created.ok) return classify(created.failure, 'post');
          const id = created.data.data?.id;
          if (typeof id !== 'string' || !/^[0-9]{1,25}$/.test(id))
            return failed('platform_error', 'X answered a post Herald cannot read', { retryable: true, mayHaveCommitted: true });
          const result = published(request, id);
          await hooks.partPublished(part.index, result);
          done.push(result);
        }
      } catch (error) {
        return outcomeOfThrown(error, 'X');
      }
      return { kind: 'published', parts: done };
    },
  };

  /**
   * The part's media ids, ready to attach. Images go up whole with their alt text; a video in
   * segments, and when X is still processing it its id is the part's progress and the outcome is
   * pending, looked at again at the pace X asks for (check_after_secs).
   */
  async function mediaOf(x: RestSession, part: PartToPublish, hooks: PublishHooks<XCredentials>): Promise<string[] | PublishOutcome> {
    const progress = parseProgress(part.progress);
    if (progress !== null) return videoStatus(x, progress.mediaId, part, hooks);
    const ids: string[] = [];
    for (const media of part.media) {
      if (media.kind === 'video') {
        const id = await uploadVideo(x, media);
        if (typeof id !== 'string') return id;
        await hooks.partProgressed(part.index, JSON.stringify({ mediaId: id } satisfies VideoProgress));
        return videoStatus(x, id, part, hooks);
      }
      const id = await uploadImage(x, media);
      if (typeof id !== 'string') return id;
      ids.push(id);
    }
    return ids;
  }

  async function uploadImage(x: RestSession, media: MediaToPublish): Promise<string | FailedOutcome> {
    const form = new FormData();
    form.append('media', new Blob([await readMedia(media)], { type: media.mime }), `${media.id}`);
    form.append('media_category', media.mime === 'image/gif' ? 'tweet_gif' : 'tweet_image');
    const uploaded = await x.call<{ data?: { id?: unknown } }>({ method: 'POST', path: '/2/media/upload', form, timeoutMs: timeoutMs * 4 });
    if (!uploaded.ok) return classify(uploaded.failure, 'media');
    const id = uploaded.data.data?.id;
    if (typeof id !== 'string') return failed('platform_error', 'X answered an upload Herald cannot read', { retryable: true });
    if (media.altText !== null) {
      const described = await x.call({ method: 'POST', path: '/2/media/metadata', json: { id, metadata: { alt_text: { text: media.altText } } }, timeoutMs });
      if (!described.ok) return classify(described.failure, 'media');
    }
    return id;
  }

  async function uploadVideo(x: RestSession, media: MediaToPublish): Promise<string | FailedOutcome> {
    const started = await x.call<{ data?: { id?: unknown } }>({
      method: 'POST',
      path: '/2/media/upload/initialize',
      json: { media_type: media.mime, total_bytes: media.bytes, media_category: 'tweet_video' },
      timeoutMs,
    });
    if (!started.ok) return classify(started.failure, 'media');
    const id = started.data.data?.id;
    if (typeof id !== 'string') return failed('platform_error', 'X answered an upload Herald cannot read', { retryable: true });
    const path = `/2/media/upload/${encodeURIComponent(id)}`;
    await uploadInChunks(media, chunkRanges(media.bytes, SEGMENT_BYTES), {
      async send({ index, body }) {
        const form = new FormData();
        form.append('media', new Blob([body]), 'segment');
        form.append('segment_index', String(index));
        const appended = await x.call({ method: 'POST', path: `${path}/append`, form, timeoutMs: timeoutMs * 4 });
        if (!appended.ok) throw new Halt(classify(appended.failure, 'media'));
      },
    });
    const finished = await x.call({ method: 'POST', path: `${path}/finalize`, timeoutMs });
    if (!finished.ok) return classify(finished.failure, 'media');
    return id;
  }

  /** Where X is with a video: its id once processed, pending while processing, media_error when X could not process it. */
  async function videoStatus(x: RestSession, mediaId: string, part: PartToPublish, hooks: PublishHooks<XCredentials>): Promise<string[] | PublishOutcome> {
    const status = await x.call<{ data?: { processing_info?: { state?: unknown; check_after_secs?: unknown; error?: { message?: unknown } } } }>({
      method: 'GET',
      path: `/2/media/upload?command=STATUS&media_id=${encodeURIComponent(mediaId)}`,
      timeoutMs,
    });
    if (!status.ok) return classify(status.failure, 'media');
    const info = status.data.data?.processing_info;
    if (info === undefined || info.state === 'succeeded') return [mediaId];
    if (info.state === 'failed') {
      // A retry uploads the video again rather than asking about this one.
      await hooks.partProgressed(part.index, null);
      const reason = typeof info.error?.message === 'string' ? `: ${info.error.message.slice(0, 300)}` : '';
      return failed('media_error', `X could not process the video${reason}`);
    }
    const seconds = typeof info.check_after_secs === 'number' && info.check_after_secs > 0 ? info.check_after_secs : 5;
    return { kind: 'pending', checkAfterMs: seconds * 1000 };
  }
}

function published(request: PublishRequest<XCredentials>, id: string): PublishedPart {
  return { platformPostId: id, url: `https://x.com/${encodeURIComponent(request.account.username)}/status/${id}`, cid: null };
}

/** The spec's XFields as X's request fields, on the post itself (replies take none). */
function postFields(fields: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (typeof fields.replySettings === 'string') body.reply_settings = fields.replySettings;
  if (typeof fields.communityId === 'string') body.community_id = fields.communityId;
  if (typeof fields.madeWithAi === 'boolean') body.made_with_ai = fields.madeWithAi;
  if (typeof fields.paidPartnership === 'boolean') body.paid_partnership = fields.paidPartnership;
  return body;
}

interface ListedPost {
  id: string;
  text: string;
  created_at: string;
  referenced_tweets?: { type: string; id: string }[];
}

function isListedPost(value: unknown): value is ListedPost {
  if (typeof value !== 'object' || value === null) return false;
  const post = value as Record<string, unknown>;
  return (
    typeof post.id === 'string' &&
    typeof post.text === 'string' &&
    typeof post.created_at === 'string' &&
    (post.referenced_tweets === undefined || Array.isArray(post.referenced_tweets))
  );
}

function repliedTo(post: ListedPost): string | null {
  return post.referenced_tweets?.find((ref) => ref.type === 'replied_to')?.id ?? null;
}

/** A post's text as comparable with what was sent: links dropped (X rewrites them to t.co), X's HTML escapes read, spaces collapsed. */
function comparable(text: string): string {
  return text
    .replace(/https?:\/\/\S+/g, '')
    .replace(/&(amp|lt|gt);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>' })[name] ?? '')
    .normalize('NFC')
    .replace(/\s+/g, ' ')
    .trim();
}

/** What a part records while X processes its video. */
interface VideoProgress {
  mediaId: string;
}

function parseProgress(progress: string | null): VideoProgress | null {
  if (progress === null) return null;
  const parsed = JSON.parse(progress) as Partial<VideoProgress>;
  return typeof parsed.mediaId === 'string' ? { mediaId: parsed.mediaId } : null;
}
