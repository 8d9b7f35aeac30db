import { randomUUID } from 'node:crypto';
import type { ConnectedAccount } from '../../../domain/ports/publisher.js';
import type { OAuthConsent } from '../../../domain/ports/oauth.js';
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
import { ConnectError } from '../../../domain/ports/publisher.js';
import { failed, Halt, readMedia, reconciliationOfThrown } from '../http-outcomes.js';
import { publishParts } from '../publish-parts.js';
import { onBase, type OAuthApp } from '../oauth.js';
import { classify, type MetaStep } from './classify.js';
import { codeOf, consentCall, consentPage } from './consent.js';
import { idOf, listed } from './containers.js';
import { createGraphApi, metaTime, type GraphApi, type GraphCall, type GraphResult } from './graph.js';
import type { AdapterOptions } from '../rest-api.js';

/**
 * Facebook Pages through Facebook Login and the Pages API, as documented
 * (developers.facebook.com/docs: facebook-login/guides/access-tokens/get-long-lived, pages-api/posts,
 * graph-api/reference/page/photos, video-api/guides/publishing, graph-api/guides/error-handling;
 * reference notes in shared/reference/platform-apis-meta-tiktok-youtube.md §3): the consent page on
 * www.facebook.com, the API on graph.facebook.com, video bytes on graph-video.facebook.com.
 * HERALD_FACEBOOK_BASE_URL replaces all three origins.
 */
export const FACEBOOK_ENDPOINTS = {
  authorize: 'https://www.facebook.com/{version}/dialog/oauth',
  graph: 'https://graph.facebook.com',
  video: 'https://graph-video.facebook.com',
} as const;

/** Listing the person's Pages, posting and reading posts on them, comments, and video. */
export const FACEBOOK_SCOPES = [
  'pages_show_list',
  'pages_manage_posts',
  'pages_read_engagement',
  'pages_read_user_engagement',
  'pages_manage_engagement',
  'publish_video',
] as const;

/** What is kept for a Page: its token, which does not expire (a password change or a removed app ends it). */
export interface FacebookCredentials {
  pageToken: string;
}

export type FacebookOptions = AdapterOptions & {
  /** The Graph API version of every call (`v25.0`). */
  version: string;
  /** The app, to exchange codes; undefined when this server has none. */
  app: OAuthApp | undefined;
};

/** How far back, before the attempt began, a post in doubt is looked for (clock skew). */
const LOOK_BACK_MS = 2 * 60_000;
const POSTS_PAGE = 25;
/** Facebook says the pace while a video processes: none documented; a video is looked at every 30 seconds. */
const VIDEO_CHECK_MS = 30_000;
/** The Page tasks that allow publishing (reference §3.1). */
const PUBLISHING_TASKS = ['CREATE_CONTENT', 'MANAGE'];

/** Facebook Login: a short-lived user token, a long-lived one, then every Page the person chose, each with its Page token. */
export function facebookConsent(options: FacebookOptions & { app: OAuthApp }): OAuthConsent {
  const graph = createGraphApi(options.fetch, onBase(FACEBOOK_ENDPOINTS.graph, options.baseUrl));
  const { app, version: v } = options;
  return {
    begin: (state, redirectUri) =>
      Promise.resolve(consentPage(onBase(FACEBOOK_ENDPOINTS.authorize.replace('{version}', v), options.baseUrl), app, FACEBOOK_SCOPES, state, redirectUri)),
    async finish(code, _verifier, redirectUri) {
      const short = await consentCall<{ access_token?: unknown }>(
        graph,
        {
          method: 'GET',
          path: `/${v}/oauth/access_token`,
          params: { client_id: app.clientId, client_secret: app.clientSecret, redirect_uri: redirectUri, code: codeOf(code) },
          token: null,
        },
        'Facebook',
        'the code exchange',
      );
      if (typeof short.access_token !== 'string') throw new ConnectError('bad_answer', 'Facebook answered the code exchange with something Herald cannot use');
      const long = await consentCall<{ access_token?: unknown }>(
        graph,
        {
          method: 'GET',
          path: `/${v}/oauth/access_token`,
          params: { grant_type: 'fb_exchange_token', client_id: app.clientId, client_secret: app.clientSecret, fb_exchange_token: short.access_token },
          token: null,
        },
        'Facebook',
        'the long-lived token exchange',
      );
      // Page tokens got with a long-lived user token do not expire.
      const userToken = typeof long.access_token === 'string' ? long.access_token : short.access_token;
      const granted = await consentCall<{ data?: { permission?: unknown; status?: unknown }[] }>(
        graph,
        { method: 'GET', path: `/${v}/me/permissions`, token: userToken },
        'Facebook',
        'to list the permissions granted',
      );
      const declined = ['pages_show_list', 'pages_manage_posts'].filter(
        (needed) => !(granted.data ?? []).some((p) => p.permission === needed && p.status === 'granted'),
      );
      if (declined.length > 0)
        throw new ConnectError(
          'invalid_credentials',
          `The person did not grant ${declined.join(' and ')}, which Herald needs to publish to their Pages; connect again and allow it`,
        );
      const pages = await consentCall<{ data?: { id?: unknown; name?: unknown; access_token?: unknown; tasks?: unknown }[] }>(
        graph,
        { method: 'GET', path: `/${v}/me/accounts`, params: { fields: 'id,name,access_token,tasks', limit: 100 }, token: userToken },
        'Facebook',
        'to list the Pages',
      );
      const accounts: ConnectedAccount<FacebookCredentials>[] = [];
      for (const page of pages.data ?? []) {
        const tasks = Array.isArray(page.tasks) ? page.tasks : [];
        if (typeof page.id !== 'string' || typeof page.name !== 'string' || typeof page.access_token !== 'string') continue;
        if (!tasks.some((task) => PUBLISHING_TASKS.includes(String(task)))) continue;
        accounts.push({ platformUserId: page.id, username: page.name, displayName: page.name, credentials: { pageToken: page.access_token } });
      }
      const [first, ...rest] = accounts;
      if (first === undefined)
        throw new ConnectError('invalid_credentials', 'The person chose no Facebook Page they may publish to (the CREATE_CONTENT or MANAGE task)');
      return [first, ...rest];
    },
    // Page tokens end when the person removes the app in Facebook's settings.
    revoke: () => Promise.resolve(),
  };
}

/** What a part records while its photos or its video are on their way. */
interface FacebookProgress {
  /** Unpublished photos uploaded so far, attached to the post once all are up. */
  photos?: string[];
  /** The video, and whether Facebook took its last call (it then processes and publishes it). */
  video?: { id: string; finished: boolean };
}

/**
 * Publishes to Facebook Pages: text with the `link` field; photos uploaded as bytes, unpublished,
 * then attached to one feed post; a video by chunked upload, `pending` while Facebook processes it;
 * the first comment on the post. Facebook has no idempotency key: a post in doubt is looked for
 * among the Page's published posts, and its duplicate answer (506) is a reason to look, never proof.
 */
export function createFacebookPublisher(options: FacebookOptions): Publisher<FacebookCredentials> {
  const graph = createGraphApi(options.fetch, onBase(FACEBOOK_ENDPOINTS.graph, options.baseUrl));
  const videoApi = createGraphApi(options.fetch, onBase(FACEBOOK_ENDPOINTS.video, options.baseUrl));
  const timeoutMs = options.requestTimeoutMs ?? 30_000;
  const v = options.version;

  const call = async <T>(api: GraphApi, token: string, request: Omit<GraphCall, 'token' | 'timeoutMs'> & { timeoutMs?: number }): Promise<GraphResult<T>> =>
    api<T>({ timeoutMs, ...request, token });
  const ok = <T>(result: GraphResult<T>, step: MetaStep, now: Date): T => {
    if (!result.ok) throw new Halt(classify('Facebook', result.failure, step, now));
    return result.data;
  };

  return {
    newPartMaterial: (now) => ({ key: randomUUID(), createdAt: now.toISOString() }),

    async reconcile(request, part): Promise<Reconciliation> {
      try {
        const video = parseProgress(part.progress).video;
        // A video's last call in doubt: publish() reads the video's status before it sends anything again.
        if (part.index === 0 && video !== undefined) return { kind: 'absent' };
        return await findPost(request, part);
      } catch (error) {
        return reconciliationOfThrown(error);
      }
    },

    publish(request, hooks): Promise<PublishOutcome> {
      return publishParts(request, hooks, 'Facebook', (part, done) =>
        part.index === 0 ? publishPost(request, part, hooks) : comment(request, part, done[0]?.platformPostId ?? ''),
      );
    },
  };

  async function publishPost(request: PublishRequest<FacebookCredentials>, part: PartToPublish, hooks: PublishHooks<FacebookCredentials>) {
    const page = encodeURIComponent(request.account.platformUserId ?? '');
    const token = request.credentials.pageToken;
    const progress = parseProgress(part.progress);
    const video = part.media.find((m) => m.kind === 'video');
    if (video !== undefined) return publishVideo(request, part, video, progress, hooks);

    const photos = progress.photos ?? [];
    for (const media of part.media.slice(photos.length)) {
      const form = new FormData();
      form.append('source', new Blob([await readMedia(media)], { type: media.mime }), media.id);
      form.append('published', 'false');
      if (media.altText !== null) form.append('alt_text_custom', media.altText);
      const uploaded = ok(
        await call<{ id?: unknown }>(graph, token, { method: 'POST', path: `/${v}/${page}/photos`, form, timeoutMs: timeoutMs * 4 }),
        'create',
        request.now,
      );
      const id = idOf(uploaded);
      if (id === null) return failed('platform_error', 'Facebook answered a photo upload Herald cannot read', { retryable: true });
      photos.push(id);
      await hooks.partProgressed(part.index, JSON.stringify({ photos } satisfies FacebookProgress));
    }
    const params: Record<string, string> = { message: part.text };
    if (typeof request.fields.link === 'string') params.link = request.fields.link;
    photos.forEach((id, i) => (params[`attached_media[${i}]`] = JSON.stringify({ media_fbid: id })));
    const posted = await call<{ id?: unknown }>(graph, token, { method: 'POST', path: `/${v}/${page}/feed`, params });
    if (!posted.ok) {
      // 506: the Page's last post says the same. After an attempt in doubt, that may be this one.
      if (request.inDoubt && posted.failure.kind === 'http' && posted.failure.error?.code === 506) {
        const found = await findPost(request, part);
        if (found.kind === 'found') return found.part;
      }
      return classify('Facebook', posted.failure, 'commit', request.now);
    }
    const id = idOf(posted.data);
    if (id === null) return failed('platform_error', 'Facebook answered a post Herald cannot read', { retryable: true, mayHaveCommitted: true });
    return postOf(id);
  }

  /**
   * A video in chunks at the offsets Facebook asks for, then its finish call (the commit); pending
   * while Facebook processes it. A session whose finish Facebook never took is started afresh:
   * an unfinished upload publishes nothing.
   */
  async function publishVideo(
    request: PublishRequest<FacebookCredentials>,
    part: PartToPublish,
    media: MediaToPublish,
    progress: FacebookProgress,
    hooks: PublishHooks<FacebookCredentials>,
  ): Promise<PublishedPart | PublishOutcome> {
    const page = encodeURIComponent(request.account.platformUserId ?? '');
    const token = request.credentials.pageToken;
    if (progress.video !== undefined) {
      const state = await videoState(request, progress.video.id);
      if (state !== null) return state;
    }
    const started = ok(
      await call<{ upload_session_id?: unknown; video_id?: unknown; start_offset?: unknown; end_offset?: unknown }>(videoApi, token, {
        method: 'POST',
        path: `/${v}/${page}/videos`,
        params: { upload_phase: 'start', file_size: media.bytes },
      }),
      'create',
      request.now,
    );
    const session = typeof started.upload_session_id === 'string' ? started.upload_session_id : null;
    const videoId = idOf({ id: started.video_id });
    if (session === null || videoId === null) return failed('platform_error', 'Facebook answered a video upload Herald cannot read', { retryable: true });
    await hooks.partProgressed(part.index, JSON.stringify({ video: { id: videoId, finished: false } } satisfies FacebookProgress));
    let start = Number(started.start_offset);
    let end = Number(started.end_offset);
    while (Number.isSafeInteger(start) && Number.isSafeInteger(end) && start < end) {
      const form = new FormData();
      form.append('upload_phase', 'transfer');
      form.append('upload_session_id', session);
      form.append('start_offset', String(start));
      form.append('video_file_chunk', new Blob([await readMedia(media, { start, end: end - 1 })]), 'chunk');
      const moved = ok(
        await call<{ start_offset?: unknown; end_offset?: unknown }>(videoApi, token, {
          method: 'POST',
          path: `/${v}/${page}/videos`,
          form,
          timeoutMs: timeoutMs * 4,
        }),
        'create',
        request.now,
      );
      [start, end] = [Number(moved.start_offset), Number(moved.end_offset)];
    }
    if (start !== end) return failed('platform_error', 'Facebook answered a video chunk Herald cannot read', { retryable: true });
    const finished = await call(videoApi, token, {
      method: 'POST',
      path: `/${v}/${page}/videos`,
      params: { upload_phase: 'finish', upload_session_id: session, description: part.text },
    });
    if (!finished.ok) return classify('Facebook', finished.failure, 'commit', request.now);
    await hooks.partProgressed(part.index, JSON.stringify({ video: { id: videoId, finished: true } } satisfies FacebookProgress));
    return (await videoState(request, videoId)) ?? { kind: 'pending', checkAfterMs: VIDEO_CHECK_MS };
  }

  /**
   * Where Facebook is with a video whose upload began: its post once published, pending while it
   * processes, media_error when it could not; null when Facebook never took the finish call (the
   * upload is started again).
   */
  async function videoState(request: PublishRequest<FacebookCredentials>, videoId: string): Promise<PublishedPart | PublishOutcome | null> {
    const read = ok(
      await call<{ status?: { video_status?: unknown; uploading_phase?: { status?: unknown } }; post_id?: unknown; permalink_url?: unknown }>(
        graph,
        request.credentials.pageToken,
        { method: 'GET', path: `/${v}/${encodeURIComponent(videoId)}`, params: { fields: 'status,post_id,permalink_url' } },
      ),
      'read',
      request.now,
    );
    const status = read.status?.video_status;
    if (status === 'error') return failed('media_error', 'Facebook could not process the video');
    if (read.status?.uploading_phase?.status !== 'complete') return null;
    if (status !== 'ready') return { kind: 'pending', checkAfterMs: VIDEO_CHECK_MS };
    const postId = idOf({ id: read.post_id });
    const permalink = typeof read.permalink_url === 'string' ? new URL(read.permalink_url, 'https://www.facebook.com').toString() : null;
    return postId === null ? { platformPostId: videoId, url: permalink, cid: null } : { ...postOf(postId), url: permalink ?? postOf(postId).url };
  }

  async function comment(request: PublishRequest<FacebookCredentials>, part: PartToPublish, postId: string): Promise<PublishedPart | PublishOutcome> {
    const made = await call<{ id?: unknown }>(graph, request.credentials.pageToken, {
      method: 'POST',
      path: `/${v}/${encodeURIComponent(postId)}/comments`,
      params: { message: part.text },
    });
    if (!made.ok) return classify('Facebook', made.failure, 'commit', request.now);
    const id = idOf(made.data);
    if (id === null) return failed('platform_error', 'Facebook answered a comment Herald cannot read', { retryable: true, mayHaveCommitted: true });
    return { platformPostId: id, url: null, cid: null };
  }

  /**
   * A post in doubt among the Page's published posts since the attempt began (a comment among the
   * post's comments by the Page): the same message; the earliest match is the one, none in a page
   * that is not full means absent.
   */
  async function findPost(request: PublishRequest<FacebookCredentials>, part: PartToPublish): Promise<Reconciliation> {
    const token = request.credentials.pageToken;
    const page = request.account.platformUserId ?? '';
    const since = Math.floor((request.firstAttemptAt.getTime() - LOOK_BACK_MS) / 1000);
    const root = request.parts.find((p) => p.index === 0)?.published?.platformPostId;
    const items =
      part.index === 0
        ? listed<{ id?: unknown; message?: unknown; created_time?: unknown }>(
            { name: 'Facebook', now: request.now },
            await call(graph, token, {
              method: 'GET',
              path: `/${v}/${encodeURIComponent(page)}/published_posts`,
              params: { fields: 'id,message,created_time', since, limit: POSTS_PAGE },
            }),
          )
        : listed<{ id?: unknown; message?: unknown; created_time?: unknown; from?: { id?: unknown } }>(
            { name: 'Facebook', now: request.now },
            await call(graph, token, {
              method: 'GET',
              path: `/${v}/${encodeURIComponent(root ?? '')}/comments`,
              params: { fields: 'id,message,created_time,from', limit: POSTS_PAGE },
            }),
          ).filter((c) => c.from === undefined || c.from.id === page);
    const match = items
      .filter((item) => (item.message ?? '') === part.text && metaTime(item.created_time) >= since * 1000)
      .sort((a, b) => metaTime(a.created_time) - metaTime(b.created_time))[0];
    const id = match === undefined ? null : idOf(match);
    if (id !== null) return { kind: 'found', part: part.index === 0 ? postOf(id) : { platformPostId: id, url: null, cid: null } };
    if (items.length < POSTS_PAGE) return { kind: 'absent' };
    return {
      kind: 'cannot_tell',
      message:
        'The Page has posted too much since the attempt to tell whether Facebook holds this post; check the Page, then retry with includeUnknown=true if it is not there',
    };
  }
}

/** A Page post's id (`<page id>_<post id>`) and its page on facebook.com. */
function postOf(id: string): PublishedPart {
  const [page, post] = id.split('_');
  return { platformPostId: id, url: post === undefined ? `https://www.facebook.com/${id}` : `https://www.facebook.com/${page}/posts/${post}`, cid: null };
}

function parseProgress(progress: string | null): FacebookProgress {
  if (progress === null) return {};
  try {
    const parsed = JSON.parse(progress) as FacebookProgress;
    return typeof parsed === 'object' && parsed !== null ? parsed : {};
  } catch {
    return {};
  }
}
