import { randomUUID } from 'node:crypto';
import type { OAuthConsent } from '../../../domain/ports/oauth.js';
import type {
  MediaToPublish,
  PartToPublish,
  PublishedPart,
  Publisher,
  PublishOutcome,
  PublishRequest,
  Reconciliation,
} from '../../../domain/ports/publisher.js';
import { ConnectError } from '../../../domain/ports/publisher.js';
import { failed, Halt, outcomeOfThrown, reconciliationOfThrown } from '../http-outcomes.js';
import { onBase, type OAuthApp } from '../oauth.js';
import { classify } from './classify.js';
import { consentCall, nameOf, userTokenConsent, type MetaUserToken } from './consent.js';
import { advanceContainers, containerState, idOf, listed, reconcileContainer, type ContainerPlatform } from './containers.js';
import { createGraphApi, metaTime, type GraphApi, type GraphParams } from './graph.js';
import { refreshedToken, renewalDue, usableToken } from './user-token.js';
import type { AdapterOptions, PulledMediaOptions } from '../rest-api.js';

/**
 * Instagram API with Instagram Login, as documented (developers.facebook.com/docs/instagram-platform:
 * business-login, content-publishing, reference/ig-user/media, media_publish,
 * content_publishing_limit, ig-media/comments, refresh_access_token; reference notes in
 * shared/reference/platform-apis-meta-tiktok-youtube.md §2): the consent page on www.instagram.com,
 * the code exchange on api.instagram.com, everything else on graph.instagram.com.
 * HERALD_INSTAGRAM_BASE_URL replaces all three origins.
 */
export const INSTAGRAM_ENDPOINTS = {
  authorize: 'https://www.instagram.com/oauth/authorize',
  token: 'https://api.instagram.com/oauth/access_token',
  graph: 'https://graph.instagram.com',
} as const;

/** Who the account is, publishing, and the first comment. */
export const INSTAGRAM_SCOPES = ['instagram_business_basic', 'instagram_business_content_publish', 'instagram_business_manage_comments'] as const;

export type InstagramOptions = AdapterOptions &
  PulledMediaOptions & {
    /** The Graph API version of every call (`v25.0`). */
    version: string;
    /** The app, to exchange codes; undefined when this server has none. */
    app: OAuthApp | undefined;
  };

/** How far back, before the attempt began, a post in doubt is looked for (clock skew). */
const LOOK_BACK_MS = 2 * 60_000;
/** The media one look at the account's feed reads. */
const MEDIA_PAGE = 25;

function graphOf(options: Pick<InstagramOptions, 'fetch' | 'baseUrl'>): GraphApi {
  return createGraphApi(options.fetch, onBase(INSTAGRAM_ENDPOINTS.graph, options.baseUrl));
}

/** Instagram's consent (Instagram Login): the code exchange on api.instagram.com, the rest on graph.instagram.com. */
export function instagramConsent(options: InstagramOptions & { app: OAuthApp }): OAuthConsent {
  const graph = graphOf(options);
  return userTokenConsent(
    {
      platform: 'Instagram',
      authorize: onBase(INSTAGRAM_ENDPOINTS.authorize, options.baseUrl),
      scopes: INSTAGRAM_SCOPES,
      exchange: createGraphApi(options.fetch, new URL(onBase(INSTAGRAM_ENDPOINTS.token, options.baseUrl)).origin),
      graph,
      longLivedGrant: 'ig_exchange_token',
      async identify(accessToken, exchangedUserId) {
        const me = await consentCall<{ user_id?: unknown; username?: unknown; name?: unknown }>(
          graph,
          { method: 'GET', path: `/${options.version}/me`, params: { fields: 'user_id,username,name' }, token: accessToken },
          'Instagram',
          'to say who the account is',
        );
        // The professional account's id (user_id), which publishing takes; the exchange's id only when /me gives none.
        const id = typeof me.user_id === 'string' || typeof me.user_id === 'number' ? String(me.user_id) : exchangedUserId;
        if (id === null || typeof me.username !== 'string') throw new ConnectError('bad_answer', 'Instagram answered an account Herald cannot read');
        return { id, username: me.username, name: nameOf(me.name) };
      },
    },
    options.app,
  );
}

/**
 * Publishes to Instagram professional accounts through containers (see containers.ts): one image,
 * a carousel of 2–10 images and videos, a Reel, a Story; the caption and InstagramFields on the
 * container; the first comment on the published media. The day's publishing quota is read before
 * new containers are made, and a used-up quota waits rather than fails.
 */
export function createInstagramPublisher(options: InstagramOptions): Publisher<MetaUserToken> {
  const graph = graphOf(options);
  const timeoutMs = options.requestTimeoutMs ?? 30_000;
  const v = options.version;

  const road = (request: PublishRequest<MetaUserToken>, token: string): ContainerPlatform => {
    const ig = encodeURIComponent(request.account.platformUserId ?? '');
    const story = request.postType === 'story';
    const fields = request.fields;
    return {
      name: 'Instagram',
      api: graph,
      token,
      userId: ig,
      now: request.now,
      timeoutMs,
      // Meta: look once a minute for video; images are usually ready within seconds.
      checkAfterMs: (media) => (media.some((m) => m.kind === 'video') ? 60_000 : 10_000),
      status: async (container) => {
        const read = await graph<{ status_code?: unknown; status?: unknown }>({
          method: 'GET',
          path: `/${v}/${encodeURIComponent(container)}`,
          params: { fields: 'status_code,status' },
          token,
          timeoutMs,
        });
        if (!read.ok) throw new Halt(classify('Instagram', read.failure, 'read', request.now));
        return { state: containerState(read.data.status_code), reason: typeof read.data.status === 'string' ? read.data.status.slice(0, 300) : null };
      },
      childParams: (media, url) =>
        media.kind === 'video'
          ? { is_carousel_item: true, media_type: 'VIDEO', video_url: url }
          : { is_carousel_item: true, image_url: url, ...altText(media) },
      parentParams: (part, children) => ({ media_type: 'CAROUSEL', children: children.join(','), caption: part.text, ...postFields(fields, false) }),
      singleParams: (part, media, url) => {
        if (story) return media?.kind === 'video' ? { media_type: 'STORIES', video_url: url } : { media_type: 'STORIES', image_url: url };
        if (media?.kind === 'video') return { media_type: 'REELS', video_url: url, caption: part.text, ...postFields(fields, true) };
        return { image_url: url, caption: part.text, ...(media === undefined ? {} : altText(media)), ...postFields(fields, false) };
      },
      createPath: `/${v}/${ig}/media`,
      publishPath: `/${v}/${ig}/media_publish`,
    };
  };

  const tokenFor = (request: PublishRequest<MetaUserToken>, hooks: Parameters<Publisher<MetaUserToken>['publish']>[1]) =>
    usableToken('Instagram', request.credentials, hooks, request.now, (current) =>
      refreshedToken(graph, 'Instagram', 'ig_refresh_token', current, request.now),
    ).then((t) => t.accessToken);

  return {
    credentialsEndAt: (credentials) => new Date(credentials.expiresAt),
    renewCredentials: (credentials, now) =>
      renewalDue(credentials, now) ? refreshedToken(graph, 'Instagram', 'ig_refresh_token', credentials, now) : Promise.resolve(credentials),
    newPartMaterial: (now) => ({ key: randomUUID(), createdAt: now.toISOString() }),

    async reconcile(request, part, hooks): Promise<Reconciliation> {
      try {
        const token = await tokenFor(request, hooks);
        if (part.index === 0) return await reconcileContainer(road(request, token), part, () => findMedia(request, part, token));
        return await findComment(request, part, token);
      } catch (error) {
        return reconciliationOfThrown(error);
      }
    },

    async publish(request, hooks): Promise<PublishOutcome> {
      const done: PublishedPart[] = [];
      try {
        const token = await tokenFor(request, hooks);
        for (const part of request.parts) {
          if (part.published !== null) {
            done.push(part.published);
            continue;
          }
          if (part.index === 0) {
            const made = await publishMedia(request, part, token, hooks);
            if ('kind' in made) return made;
            done.push(made);
            continue;
          }
          const root = done[0]?.platformPostId ?? '';
          const comment = await graph<{ id?: unknown }>({
            method: 'POST',
            path: `/${v}/${encodeURIComponent(root)}/comments`,
            params: { message: part.text },
            token,
            timeoutMs,
          });
          if (!comment.ok) return classify('Instagram', comment.failure, 'commit', request.now);
          const id = idOf(comment.data);
          if (id === null) return failed('platform_error', 'Instagram answered a comment Herald cannot read', { retryable: true, mayHaveCommitted: true });
          const result = { platformPostId: id, url: null, cid: null };
          await hooks.partPublished(part.index, result);
          done.push(result);
        }
      } catch (error) {
        return outcomeOfThrown(error, 'Instagram');
      }
      return { kind: 'published', parts: done };
    },
  };

  async function publishMedia(
    request: PublishRequest<MetaUserToken>,
    part: PartToPublish,
    token: string,
    hooks: Parameters<Publisher<MetaUserToken>['publish']>[1],
  ): Promise<PublishedPart | PublishOutcome> {
    if (part.media.length === 0) return failed('user_content', 'An Instagram post needs at least one image or video');
    for (const media of part.media) {
      const problem = options.publicUrlProblem(media.publicUrl(request.now));
      if (problem !== null) return failed('system_error', `Instagram fetches media from this server's public URL, and cannot: ${problem}`);
    }
    if (part.progress === null) {
      const quota = await quotaLeft(request, token);
      if (quota !== null) return quota;
    }
    const made = await advanceContainers(road(request, token), part, hooks);
    if (!('mediaId' in made)) return made;
    const result: PublishedPart = { platformPostId: made.mediaId, url: null, cid: null };
    // The media id is kept before its permalink is asked for: the permalink is cosmetic and may fail.
    await hooks.partPublished(part.index, result);
    const read = await graph<{ permalink?: unknown }>({
      method: 'GET',
      path: `/${v}/${encodeURIComponent(made.mediaId)}`,
      params: { fields: 'permalink' },
      token,
      timeoutMs,
    });
    return { ...result, url: read.ok && typeof read.data.permalink === 'string' ? read.data.permalink : null };
  }

  /** A used-up day waits: rate_limited, to try again in an hour, when the rolling window may have freed one. */
  async function quotaLeft(request: PublishRequest<MetaUserToken>, token: string): Promise<PublishOutcome | null> {
    const read = await graph<{ data?: { quota_usage?: unknown; config?: { quota_total?: unknown } }[] }>({
      method: 'GET',
      path: `/${v}/${encodeURIComponent(request.account.platformUserId ?? '')}/content_publishing_limit`,
      params: { fields: 'quota_usage,config' },
      token,
      timeoutMs,
    });
    if (!read.ok) return classify('Instagram', read.failure, 'read', request.now);
    const limit = read.data.data?.[0];
    const used = limit?.quota_usage;
    const total = limit?.config?.quota_total;
    if (typeof used === 'number' && typeof total === 'number' && used >= total)
      return failed(
        'rate_limited',
        `The account has published its ${total} posts of the last 24 hours that Instagram allows; Herald waits for the window to free one`,
        {
          retryable: true,
          retryAfter: new Date(request.now.getTime() + 3_600_000),
        },
      );
    return null;
  }

  /**
   * The media a published container became: the account's recent media (stories are listed apart)
   * with this caption since the attempt began.
   */
  async function findMedia(request: PublishRequest<MetaUserToken>, part: PartToPublish, token: string): Promise<Reconciliation> {
    const story = request.postType === 'story';
    const recent = listed<{ id?: unknown; caption?: unknown; timestamp?: unknown; permalink?: unknown }>(
      { name: 'Instagram', now: request.now },
      await graph({
        method: 'GET',
        path: `/${v}/${encodeURIComponent(request.account.platformUserId ?? '')}/${story ? 'stories' : 'media'}`,
        params: { fields: 'id,caption,timestamp,permalink', limit: MEDIA_PAGE },
        token,
        timeoutMs,
      }),
    );
    const since = request.firstAttemptAt.getTime() - LOOK_BACK_MS;
    const caption = story ? undefined : part.text;
    const matches = recent.filter((m) => (m.caption ?? undefined) === (caption === '' ? undefined : caption) && metaTime(m.timestamp) >= since);
    const [match] = matches;
    const id = match === undefined ? null : idOf(match);
    if (matches.length === 1 && id !== null && match !== undefined)
      return { kind: 'found', part: { platformPostId: id, url: typeof match.permalink === 'string' ? match.permalink : null, cid: null } };
    return {
      kind: 'cannot_tell',
      message: 'Instagram says the post was published, but Herald cannot tell which of the account’s posts it is; check the account before publishing it again',
    };
  }

  /** A first comment in doubt: the published media's comments with this text by this account. */
  async function findComment(request: PublishRequest<MetaUserToken>, part: PartToPublish, token: string): Promise<Reconciliation> {
    const root = request.parts.find((p) => p.index === 0)?.published?.platformPostId;
    if (root === undefined) return { kind: 'absent' };
    const comments = listed<{ id?: unknown; text?: unknown; username?: unknown }>(
      { name: 'Instagram', now: request.now },
      await graph({ method: 'GET', path: `/${v}/${encodeURIComponent(root)}/comments`, params: { fields: 'id,text,username' }, token, timeoutMs }),
    );
    const mine = comments.find((c) => c.text === part.text && (c.username === undefined || c.username === request.account.username));
    const id = mine === undefined ? null : idOf(mine);
    return id === null ? { kind: 'absent' } : { kind: 'found', part: { platformPostId: id, url: null, cid: null } };
  }
}

function altText(media: MediaToPublish): GraphParams {
  return media.altText === null ? {} : { alt_text: media.altText };
}

/** The spec's InstagramFields as the container's parameters; the Reel-only ones on Reels alone. */
function postFields(fields: Readonly<Record<string, unknown>>, reel: boolean): GraphParams {
  const params: GraphParams = {};
  if (Array.isArray(fields.collaborators) && fields.collaborators.length > 0) params.collaborators = JSON.stringify(fields.collaborators);
  if (typeof fields.locationId === 'string') params.location_id = fields.locationId;
  if (reel && typeof fields.shareToFeed === 'boolean') params.share_to_feed = fields.shareToFeed;
  if (reel && typeof fields.thumbOffsetMs === 'number') params.thumb_offset = fields.thumbOffsetMs;
  return params;
}
