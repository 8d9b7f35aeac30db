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
import { failed, Halt, outcomeOfThrown, readMedia, type FailedOutcome } from '../http-outcomes.js';
import type { OAuthTokens } from '../oauth.js';
import { createLinkedInApi, type LinkedInResult } from './api.js';
import { classify, duplicateOf } from './classify.js';
import type { AdapterOptions } from '../rest-api.js';

/** What is stored for a LinkedIn member: the access token (60 days; self-serve apps get no refresh token). */
export type LinkedInCredentials = OAuthTokens;

type Options = AdapterOptions & {
  /** The LinkedIn-Version header (YYYYMM). */
  version: string;
};

/** How often to ask whether LinkedIn has processed a video (it documents no pace). */
const VIDEO_CHECK_MS = 5_000;

/**
 * Publishes member posts to LinkedIn: the commentary escaped as LinkedIn's little text requires
 * (unescaped, LinkedIn silently cuts the post at the first reserved character), one image or 2–20
 * (`multiImage`) with alt text through the Images API, a video through the Videos API (its parts
 * uploaded to the URLs LinkedIn gives, their ETags in order, then `pending` until it is available),
 * and the first comment on the post. The media's URNs are the part's progress before the post is
 * sent, so a post in doubt can be sent again byte for byte: LinkedIn answers an identical one with
 * the URN of the first (422 DUPLICATE_POST).
 */
export function createLinkedInPublisher(options: Options): Publisher<LinkedInCredentials> {
  const api = createLinkedInApi(options.fetch, options.baseUrl, options.version);
  const timeoutMs = options.requestTimeoutMs ?? 30_000;
  const classifyStep = (failure: Parameters<typeof classify>[0], step: Parameters<typeof classify>[1]) => classify(failure, step, options.version);

  return {
    newPartMaterial: (now) => ({ key: randomUUID(), createdAt: now.toISOString() }),

    /**
     * LinkedIn lists no member's posts to a self-serve app, so a post in doubt is sent again,
     * identical: 201 means the first never arrived, 422 DUPLICATE_POST names the one that did.
     * A comment in doubt cannot be told apart from a new one: a person decides.
     */
    async reconcile(request, part): Promise<Reconciliation> {
      if (part.index > 0)
        return {
          kind: 'cannot_tell',
          message:
            'LinkedIn cannot be asked whether an earlier attempt added this comment; check the post, then retry with includeUnknown=true if it is not there',
        };
      const expired = expiredToken(request);
      if (expired !== null) return { kind: 'cannot_tell', message: expired.message };
      const progress = parseProgress(part.progress);
      // No media recorded while the post has some: the post was never sent.
      if (progress === null && part.media.length > 0) return { kind: 'absent' };
      const sent = await createPost(request, part, progress?.urns ?? []);
      if (sent.ok) return { kind: 'found', part: sent.part };
      const duplicate = sent.failure.kind === 'http' ? duplicateOf(sent.failure) : null;
      if (duplicate !== null) return { kind: 'found', part: postPart(duplicate) };
      const outcome = classifyStep(sent.failure, 'post');
      return outcome.retryable
        ? { kind: 'unanswered', message: outcome.message }
        : {
            kind: 'cannot_tell',
            message: `LinkedIn could not confirm whether an earlier attempt published this (${outcome.message}); check the member's posts`,
          };
    },

    async publish(request, hooks): Promise<PublishOutcome> {
      const expired = expiredToken(request);
      if (expired !== null) return expired;
      const done: PublishedPart[] = [];
      try {
        for (const part of request.parts) {
          if (part.published !== null) {
            done.push(part.published);
            continue;
          }
          const parent = done[0];
          if (parent === undefined) {
            const urns = await mediaOf(request, part, hooks);
            if (!Array.isArray(urns)) return urns;
            const sent = await createPost(request, part, urns);
            if (!sent.ok) return classifyStep(sent.failure, 'post');
            await hooks.partPublished(part.index, sent.part);
            done.push(sent.part);
            continue;
          }
          const comment = await api<{ id?: unknown }>(
            {
              method: 'POST',
              path: `/rest/socialActions/${encodeURIComponent(parent.platformPostId)}/comments`,
              json: { actor: author(request), object: parent.platformPostId, message: { text: escapeLittleText(part.text) } },
              timeoutMs,
            },
            request.credentials.accessToken,
          );
          if (!comment.ok) return classifyStep(comment.failure, 'comment');
          const id = comment.headers.get('x-restli-id') ?? (typeof comment.data.id === 'string' ? comment.data.id : null);
          if (id === null) return failed('platform_error', 'LinkedIn answered a comment Herald cannot read', { retryable: true, mayHaveCommitted: true });
          const result = { platformPostId: id, url: parent.url, cid: null };
          await hooks.partPublished(part.index, result);
          done.push(result);
        }
      } catch (error) {
        return outcomeOfThrown(error, 'LinkedIn');
      }
      return { kind: 'published', parts: done };
    },
  };

  /** Sends the post: the escaped commentary, and the media's URNs with their alt texts. */
  async function createPost(
    request: PublishRequest<LinkedInCredentials>,
    part: PartToPublish,
    urns: string[],
  ): Promise<{ ok: true; part: PublishedPart } | { ok: false; failure: Extract<LinkedInResult<unknown>, { ok: false }>['failure'] }> {
    const media = urns.map((id, i) => ({ id, altText: part.media[i]?.altText ?? undefined }));
    const content = media.length === 0 ? {} : media.length === 1 ? { content: { media: media[0] } } : { content: { multiImage: { images: media } } };
    const sent = await api(
      {
        method: 'POST',
        path: '/rest/posts',
        json: {
          author: author(request),
          commentary: escapeLittleText(part.text),
          visibility: 'PUBLIC',
          distribution: { feedDistribution: 'MAIN_FEED', targetEntities: [], thirdPartyDistributionChannels: [] },
          lifecycleState: 'PUBLISHED',
          isReshareDisabledByAuthor: false,
          ...content,
        },
        timeoutMs,
      },
      request.credentials.accessToken,
    );
    if (!sent.ok) return sent;
    const urn = sent.headers.get('x-restli-id');
    if (urn === null || !/^urn:li:(share|ugcPost):[0-9]+$/.test(urn))
      return { ok: false, failure: { kind: 'network', message: 'LinkedIn answered a post without its URN' } };
    return { ok: true, part: postPart(urn) };
  }

  /**
   * The part's media URNs, uploaded once: recorded as its progress before the post is sent. A
   * video LinkedIn is still processing leaves the outcome pending.
   */
  async function mediaOf(
    request: PublishRequest<LinkedInCredentials>,
    part: PartToPublish,
    hooks: PublishHooks<LinkedInCredentials>,
  ): Promise<string[] | PublishOutcome> {
    let progress = parseProgress(part.progress);
    if (progress === null) {
      const urns: string[] = [];
      for (const media of part.media) urns.push(media.kind === 'video' ? await uploadVideo(request, media) : await uploadImage(request, media));
      progress = { urns, video: part.media.some((m) => m.kind === 'video') };
      await hooks.partProgressed(part.index, JSON.stringify(progress));
    }
    if (!progress.video) return progress.urns;
    const urn = progress.urns[0] ?? '';
    const video = await api<{ status?: unknown }>(
      { method: 'GET', path: `/rest/videos/${encodeURIComponent(urn)}`, timeoutMs },
      request.credentials.accessToken,
    );
    if (!video.ok) return classifyStep(video.failure, 'media');
    if (video.data.status === 'AVAILABLE') return progress.urns;
    if (video.data.status === 'PROCESSING_FAILED') {
      // A retry uploads the video again.
      await hooks.partProgressed(part.index, null);
      return failed('media_error', 'LinkedIn could not process the video');
    }
    return { kind: 'pending', checkAfterMs: VIDEO_CHECK_MS };
  }

  async function uploadImage(request: PublishRequest<LinkedInCredentials>, media: MediaToPublish): Promise<string> {
    const token = request.credentials.accessToken;
    const started = await api<{ value?: { uploadUrl?: unknown; image?: unknown } }>(
      { method: 'POST', path: '/rest/images?action=initializeUpload', json: { initializeUploadRequest: { owner: author(request) } }, timeoutMs },
      token,
    );
    if (!started.ok) throw new Halt(classifyStep(started.failure, 'media'));
    const { uploadUrl, image } = started.data.value ?? {};
    if (typeof uploadUrl !== 'string' || typeof image !== 'string')
      throw new Halt(failed('platform_error', 'LinkedIn answered an image upload Herald cannot read', { retryable: true }));
    const put = await api({ method: 'PUT', path: uploadUrl, bytes: await readMedia(media), timeoutMs: timeoutMs * 4 }, token);
    if (!put.ok) throw new Halt(classifyStep(put.failure, 'media'));
    return image;
  }

  async function uploadVideo(request: PublishRequest<LinkedInCredentials>, media: MediaToPublish): Promise<string> {
    const token = request.credentials.accessToken;
    const started = await api<{ value?: { video?: unknown; uploadToken?: unknown; uploadInstructions?: unknown } }>(
      {
        method: 'POST',
        path: '/rest/videos?action=initializeUpload',
        json: { initializeUploadRequest: { owner: author(request), fileSizeBytes: media.bytes, uploadCaptions: false, uploadThumbnail: false } },
        timeoutMs,
      },
      token,
    );
    if (!started.ok) throw new Halt(classifyStep(started.failure, 'media'));
    const { video, uploadToken, uploadInstructions } = started.data.value ?? {};
    const parts = Array.isArray(uploadInstructions) ? uploadInstructions.filter(isInstruction) : [];
    if (typeof video !== 'string' || typeof uploadToken !== 'string' || parts.length === 0)
      throw new Halt(failed('platform_error', 'LinkedIn answered a video upload Herald cannot read', { retryable: true }));
    // Each range to its own URL, in order, as LinkedIn split the file; the ETags prove the parts.
    const etags: string[] = [];
    for (const part of parts) {
      const put = await api(
        {
          method: 'PUT',
          path: part.uploadUrl,
          bytes: await readMedia(media, { start: part.firstByte, end: part.lastByte }),
          anonymous: true,
          timeoutMs: timeoutMs * 4,
        },
        token,
      );
      if (!put.ok) throw new Halt(classifyStep(put.failure, 'media'));
      const etag = put.headers.get('etag');
      if (etag === null) throw new Halt(failed('platform_error', 'LinkedIn answered a video part without its ETag', { retryable: true }));
      etags.push(etag);
    }
    const finished = await api(
      {
        method: 'POST',
        path: '/rest/videos?action=finalizeUpload',
        json: { finalizeUploadRequest: { video, uploadToken, uploadedPartIds: etags } },
        timeoutMs,
      },
      token,
    );
    if (!finished.ok) throw new Halt(classifyStep(finished.failure, 'media'));
    return video;
  }
}

/** The reserved characters of LinkedIn's little text (Posts API, "little text format"), each escaped with a backslash. */
export function escapeLittleText(text: string): string {
  return text.replace(/[\\|{}@[\]()<>#*_~]/g, '\\$&');
}

function author(request: PublishRequest<LinkedInCredentials>): string {
  return `urn:li:person:${request.account.platformUserId ?? ''}`;
}

function postPart(urn: string): PublishedPart {
  return { platformPostId: urn, url: `https://www.linkedin.com/feed/update/${urn}/`, cid: null };
}

/** LinkedIn's access tokens last 60 days and cannot be refreshed by a self-serve app: past that, only a new consent helps. */
function expiredToken(request: PublishRequest<LinkedInCredentials>): FailedOutcome | null {
  const { expiresAt } = request.credentials;
  if (expiresAt === null || Date.parse(expiresAt) > request.now.getTime()) return null;
  return failed('auth_expired', `LinkedIn's access token for this account ended on ${expiresAt.slice(0, 10)}; connect the account again`, {
    credentialsRevoked: true,
  });
}

interface Instruction {
  uploadUrl: string;
  firstByte: number;
  lastByte: number;
}

function isInstruction(value: unknown): value is Instruction {
  const i = value as Partial<Instruction> | null;
  return typeof i?.uploadUrl === 'string' && typeof i.firstByte === 'number' && typeof i.lastByte === 'number' && i.firstByte <= i.lastByte;
}

/** What the first part records once its media are uploaded: their URNs, in the post's order. */
interface MediaProgress {
  urns: string[];
  video: boolean;
}

function parseProgress(progress: string | null): MediaProgress | null {
  if (progress === null) return null;
  const parsed = JSON.parse(progress) as Partial<MediaProgress>;
  return Array.isArray(parsed.urns) && typeof parsed.video === 'boolean'
    ? { urns: parsed.urns.filter((u): u is string => typeof u === 'string'), video: parsed.video }
    : null;
}
