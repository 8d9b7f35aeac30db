import { randomUUID } from 'node:crypto';
import type { OAuthConsent } from '../../../domain/ports/oauth.js';
import type { PartToPublish, PublishedPart, Publisher, PublishHooks, PublishOutcome, PublishRequest, Reconciliation } from '../../../domain/ports/publisher.js';
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
 * The Threads API as documented (developers.facebook.com/docs/threads: get-started,
 * long-lived-tokens, posts, create-replies, troubleshooting, overview (publishing limits);
 * reference notes in shared/reference/platform-apis-meta-tiktok-youtube.md §4): the consent page
 * on threads.net, everything else on graph.threads.net. HERALD_THREADS_BASE_URL replaces both.
 */
export const THREADS_ENDPOINTS = {
  authorize: 'https://threads.net/oauth/authorize',
  graph: 'https://graph.threads.net',
} as const;

/** Every endpoint, publishing, and replies (thread parts and the first comment are replies). */
export const THREADS_SCOPES = ['threads_basic', 'threads_content_publish', 'threads_manage_replies'] as const;

const V = 'v1.0';
/** How far back, before the attempt began, a post in doubt is looked for (clock skew). */
const LOOK_BACK_MS = 2 * 60_000;
const LIST_PAGE = 25;

export type ThreadsOptions = AdapterOptions &
  PulledMediaOptions & {
    /** The app, to exchange codes; undefined when this server has none. */
    app: OAuthApp | undefined;
  };

function graphOf(options: Pick<ThreadsOptions, 'fetch' | 'baseUrl'>): GraphApi {
  return createGraphApi(options.fetch, onBase(THREADS_ENDPOINTS.graph, options.baseUrl));
}

/** Threads' consent (Threads Login): everything on graph.threads.net. */
export function threadsConsent(options: ThreadsOptions & { app: OAuthApp }): OAuthConsent {
  const graph = graphOf(options);
  return userTokenConsent(
    {
      platform: 'Threads',
      authorize: onBase(THREADS_ENDPOINTS.authorize, options.baseUrl),
      scopes: THREADS_SCOPES,
      exchange: graph,
      graph,
      longLivedGrant: 'th_exchange_token',
      async identify(accessToken) {
        // /me's id, as a string: the exchange's user_id is a JSON number wider than a double.
        const me = await consentCall<{ id?: unknown; username?: unknown; name?: unknown }>(
          graph,
          { method: 'GET', path: `/${V}/me`, params: { fields: 'id,username,name' }, token: accessToken },
          'Threads',
          'to say who the account is',
        );
        if ((typeof me.id !== 'string' && typeof me.id !== 'number') || typeof me.username !== 'string')
          throw new ConnectError('bad_answer', 'Threads answered an account Herald cannot read');
        return { id: String(me.id), username: me.username, name: nameOf(me.name) };
      },
    },
    options.app,
  );
}

/**
 * Publishes to Threads through containers (see containers.ts): text, one image or video, or a
 * carousel of 2–20 on the first part with ThreadsFields; every later part (thread parts, then the
 * first comment) a reply to the part before, by its published media id. The day's post and reply
 * quotas are read before new containers are made; a used-up quota waits rather than fails.
 */
export function createThreadsPublisher(options: ThreadsOptions): Publisher<MetaUserToken> {
  const graph = graphOf(options);
  const timeoutMs = options.requestTimeoutMs ?? 30_000;

  const road = (request: PublishRequest<MetaUserToken>, token: string, parent: string | null): ContainerPlatform => {
    const uid = encodeURIComponent(request.account.platformUserId ?? '');
    return {
      name: 'Threads',
      api: graph,
      token,
      userId: uid,
      now: request.now,
      timeoutMs,
      // Threads: "wait on average 30 seconds before publishing a container".
      checkAfterMs: () => 30_000,
      status: async (container) => {
        const read = await graph<{ status?: unknown; error_message?: unknown }>({
          method: 'GET',
          path: `/${V}/${encodeURIComponent(container)}`,
          params: { fields: 'status,error_message' },
          token,
          timeoutMs,
        });
        if (!read.ok) throw new Halt(classify('Threads', read.failure, 'read', request.now));
        return { state: containerState(read.data.status), reason: typeof read.data.error_message === 'string' ? read.data.error_message.slice(0, 300) : null };
      },
      childParams: (media, url) =>
        media.kind === 'video'
          ? { is_carousel_item: true, media_type: 'VIDEO', video_url: url }
          : { is_carousel_item: true, media_type: 'IMAGE', image_url: url, ...(media.altText === null ? {} : { alt_text: media.altText }) },
      parentParams: (part, children) => ({ media_type: 'CAROUSEL', children: children.join(','), text: part.text, ...partFields(request, parent, false) }),
      singleParams: (part, media, url) => {
        if (media === undefined) return { media_type: 'TEXT', text: part.text, ...partFields(request, parent, true) };
        const alt = media.altText === null ? {} : { alt_text: media.altText };
        return media.kind === 'video'
          ? { media_type: 'VIDEO', video_url: url, text: part.text, ...alt, ...partFields(request, parent, false) }
          : { media_type: 'IMAGE', image_url: url, text: part.text, ...alt, ...partFields(request, parent, false) };
      },
      createPath: `/${V}/${uid}/threads`,
      publishPath: `/${V}/${uid}/threads_publish`,
    };
  };

  const tokenFor = (request: PublishRequest<MetaUserToken>, hooks: PublishHooks<MetaUserToken>) =>
    usableToken('Threads', request.credentials, hooks, request.now, (current) =>
      refreshedToken(graph, 'Threads', 'th_refresh_token', current, request.now),
    ).then((t) => t.accessToken);

  return {
    credentialsEndAt: (credentials) => new Date(credentials.expiresAt),
    renewCredentials: (credentials, now) =>
      renewalDue(credentials, now) ? refreshedToken(graph, 'Threads', 'th_refresh_token', credentials, now) : Promise.resolve(credentials),
    newPartMaterial: (now) => ({ key: randomUUID(), createdAt: now.toISOString() }),

    async reconcile(request, part, hooks): Promise<Reconciliation> {
      try {
        const token = await tokenFor(request, hooks);
        const parent = request.parts.find((p) => p.index === part.index - 1)?.published?.platformPostId ?? null;
        return await reconcileContainer(road(request, token, parent), part, () => findPost(request, part, token));
      } catch (error) {
        return reconciliationOfThrown(error);
      }
    },

    async publish(request, hooks): Promise<PublishOutcome> {
      const done: PublishedPart[] = [];
      try {
        const token = await tokenFor(request, hooks);
        for (const media of request.parts.flatMap((p) => p.media)) {
          const problem = options.publicUrlProblem(media.publicUrl(request.now));
          if (problem !== null) return failed('system_error', `Threads fetches media from this server's public URL, and cannot: ${problem}`);
        }
        const quota = await quotaLeft(request, token);
        if (quota !== null) return quota;
        for (const part of request.parts) {
          if (part.published !== null) {
            done.push(part.published);
            continue;
          }
          const made = await advanceContainers(road(request, token, done.at(-1)?.platformPostId ?? null), part, hooks);
          if (!('mediaId' in made)) return made;
          const result: PublishedPart = { platformPostId: made.mediaId, url: null, cid: null };
          // The reply chain goes on from this id: kept before the (cosmetic) permalink is asked for.
          await hooks.partPublished(part.index, result);
          const read = await graph<{ permalink?: unknown }>({
            method: 'GET',
            path: `/${V}/${encodeURIComponent(made.mediaId)}`,
            params: { fields: 'permalink' },
            token,
            timeoutMs,
          });
          const withUrl = { ...result, url: read.ok && typeof read.data.permalink === 'string' ? read.data.permalink : null };
          // Kept at once: a later part may leave this look pending, and the outcome with it.
          if (withUrl.url !== null) await hooks.partPublished(part.index, withUrl);
          done.push(withUrl);
        }
      } catch (error) {
        return outcomeOfThrown(error, 'Threads');
      }
      return { kind: 'published', parts: done };
    },
  };

  /** The day's 250 posts and 1,000 replies: a part that would pass either waits for the rolling window. */
  async function quotaLeft(request: PublishRequest<MetaUserToken>, token: string): Promise<PublishOutcome | null> {
    const fresh = request.parts.filter((p) => p.published === null && p.progress === null);
    if (fresh.length === 0) return null;
    const read = await graph<{ data?: Record<string, unknown>[] }>({
      method: 'GET',
      path: `/${V}/${encodeURIComponent(request.account.platformUserId ?? '')}/threads_publishing_limit`,
      params: { fields: 'quota_usage,config,reply_quota_usage,reply_config' },
      token,
      timeoutMs,
    });
    if (!read.ok) return classify('Threads', read.failure, 'read', request.now);
    const limit = read.data.data?.[0] ?? {};
    const left = (used: unknown, config: unknown) => {
      const total = typeof config === 'object' && config !== null ? (config as { quota_total?: unknown }).quota_total : undefined;
      return typeof used === 'number' && typeof total === 'number' ? { left: total - used, total } : null;
    };
    const posts = left(limit.quota_usage, limit.config);
    const replies = left(limit.reply_quota_usage, limit.reply_config);
    const wantPosts = fresh.filter((p) => p.index === 0).length;
    const wantReplies = fresh.length - wantPosts;
    const short =
      posts !== null && posts.left < wantPosts ? `${posts.total} posts` : replies !== null && replies.left < wantReplies ? `${replies.total} replies` : null;
    if (short === null) return null;
    return failed('rate_limited', `The account has used the ${short} of the last 24 hours that Threads allows; Herald waits for the window to free some`, {
      retryable: true,
      retryAfter: new Date(request.now.getTime() + 3_600_000),
    });
  }

  /** The post a published container became: the account's recent threads (or replies) with this text since the attempt began. */
  async function findPost(request: PublishRequest<MetaUserToken>, part: PartToPublish, token: string): Promise<Reconciliation> {
    const uid = encodeURIComponent(request.account.platformUserId ?? '');
    const recent = listed<{ id?: unknown; text?: unknown; timestamp?: unknown; permalink?: unknown }>(
      { name: 'Threads', now: request.now },
      await graph({
        method: 'GET',
        path: `/${V}/${uid}/${part.index === 0 ? 'threads' : 'replies'}`,
        params: { fields: 'id,text,timestamp,permalink', limit: LIST_PAGE },
        token,
        timeoutMs,
      }),
    );
    const since = request.firstAttemptAt.getTime() - LOOK_BACK_MS;
    const matches = recent.filter((p) => (p.text ?? '') === part.text && metaTime(p.timestamp) >= since);
    const [match] = matches;
    const id = match === undefined ? null : idOf(match);
    if (matches.length === 1 && match !== undefined && id !== null)
      return { kind: 'found', part: { platformPostId: id, url: typeof match.permalink === 'string' ? match.permalink : null, cid: null } };
    return {
      kind: 'cannot_tell',
      message: 'Threads says the post was published, but Herald cannot tell which of the account’s posts it is; check the account before publishing it again',
    };
  }
}

/** A reply's parent, and the spec's ThreadsFields on the first part (a link preview only on text). */
function partFields(request: PublishRequest<MetaUserToken>, parent: string | null, text: boolean): GraphParams {
  if (parent !== null) return { reply_to_id: parent };
  const { fields } = request;
  const params: GraphParams = {};
  if (typeof fields.replyControl === 'string') params.reply_control = fields.replyControl;
  if (typeof fields.topicTag === 'string') params.topic_tag = fields.topicTag;
  if (text && typeof fields.linkAttachment === 'string') params.link_attachment = fields.linkAttachment;
  return params;
}
