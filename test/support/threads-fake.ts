import { randomBytes } from 'node:crypto';
import {
  countSince,
  createMetaApp,
  createRecorder,
  createUsageMeter,
  DAY_MS,
  FaultQueue,
  fetchMediaLikeMeta,
  installMetaLogin,
  isMetaAnswer,
  listenLocal,
  metaError,
  metaErrors,
  metaRoute,
  metaTimestamp,
  MetaTokenStore,
  MIB,
  numericIds,
  parseFields,
  parseIdList,
  pickFields,
  toFetchRecord,
  versioned,
  type MetaAnswer,
  type MetaAuthorization,
  type MetaErrorFields,
  type MetaFault,
  type MetaFetchRecord,
  type MetaRecordedRequest,
  type MetaRouteContext,
  type MetaToken,
  type MetaUser,
} from './meta-fake-kit.js';

/**
 * An in-process Threads API, written from its documentation, for the calls Herald makes. `url` stands for
 * threads.com (the consent page) and graph.threads.net / graph.threads.com (everything else): the paths do not
 * collide. Graph paths take any `/v<d>.<d>/` prefix (Herald uses v1.0).
 * - developers.facebook.com/docs/threads/get-started/get-access-tokens-and-permissions (Updated Aug 12, 2026): GET
 *   /oauth/authorize (client_id, redirect_uri, scope, response_type=code, state) back to `redirect_uri?code=…#_` ("#_
 *   will be appended to the end of the redirect URI"), or `error=access_denied&error_reason=user_denied&
 *   error_description=The+user+denied+your+request`; codes "valid for 1 hour and can only be used once"; POST
 *   /oauth/access_token → `{"access_token": "THQVJ...", "user_id": 17841405793187218}` (user_id a JSON number, as the
 *   page shows: wider than a double holds exactly, so the fake writes it as a number too); a rejection
 *   `{"error_type":"OAuthException","code":400,"error_message":"Matching code was not found or was already used"}`;
 * - developers.facebook.com/docs/threads/get-started/long-lived-tokens: GET /access_token?grant_type=th_exchange_token
 *   → `{access_token, token_type:"bearer", expires_in:5183944}`; GET /refresh_access_token?grant_type=th_refresh_token
 *   for a token "at least 24 hours old but [that has] not expired", 60 days from then;
 * - developers.facebook.com/documentation/threads/get-started (Updated Jun 30, 2026): threads_basic for every endpoint,
 *   threads_content_publish to publish, threads_manage_replies for replies;
 * - developers.facebook.com/documentation/threads/posts (Updated Apr 14, 2026; "Create posts"): POST /{user}/threads
 *   (media_type TEXT | IMAGE | VIDEO | CAROUSEL, text, image_url, video_url, is_carousel_item, children, reply_control,
 *   topic_tag, link_attachment (TEXT only), alt_text), POST /{user}/threads_publish (creation_id); text 500 characters,
 *   "emojis are counted as the number of UTF-8 bytes"; images JPEG/PNG ≤ 8 MB, video MOV/MP4 ≤ 1 GB; carousels 2 to 20
 *   children; one topic tag of 1–50 characters without `.` or `&`; at most 5 unique links (since 2025-12-22,
 *   `THREADS_API__LINK_LIMIT_EXCEEDED`); "Threads retrieves your image from the URL provided";
 * - developers.facebook.com/documentation/threads/retrieve-and-manage-replies/create-replies: a reply is a container
 *   with `reply_to_id`, and "to reply to a thread, you must … [be] the owner of the root thread post";
 * - developers.facebook.com/documentation/threads/overview (Updated Dec 22, 2025) and …/retrieve-and-manage-replies:
 *   250 posts and 1,000 replies per 24-hour moving period, carousels count once, enforced on threads_publish;
 *   GET /{user}/threads_publishing_limit → `{data:[{quota_usage, config:{quota_total:250, quota_duration:86400},
 *   reply_quota_usage, reply_config:{quota_total:1000, quota_duration:86400}}]}`;
 * - developers.facebook.com/documentation/threads/troubleshooting.md: GET /{container}?fields=status,error_message →
 *   `{status, id}` with status IN_PROGRESS | FINISHED | PUBLISHED | ERROR | EXPIRED (not published within 24 hours),
 *   error_message FAILED_DOWNLOADING_VIDEO, FAILED_PROCESSING_AUDIO, FAILED_PROCESSING_VIDEO, INVALID_ASPEC_RATIO, …,
 *   UNKNOWN;
 * - developers.facebook.com/docs/threads/retrieve-and-discover-posts: GET /{user}/threads lists the user's threads
 *   (newest first, `limit`, `since`, `until`, cursors); the user's replies are at GET /{user}/replies
 *   (…/retrieve-and-manage-replies), so /threads leaves replies out.
 * Seen in the wild, not documented (the fake's word): `THApiException` as the error type (exileum/meta-mcp#143); code
 * 100 for text over 500 characters (gesteves/denali#1285; the wording "Param text must be at most 500 characters long"
 * is the fake's); "Tried accessing nonexisting field (status)" for a media id (exileum/meta-mcp#143); code 1 with subcode
 * 2207052 when an image cannot be fetched (gitroomhq/postiz-app#1364).
 * Choices of the fake: processing moves per poll (`imagePolls` for text, images and carousels, `videoPolls` for video),
 * any GET of a container counts as a poll; a video is fetched at creation but its failure shows as the container's
 * ERROR (FAILED_DOWNLOADING_VIDEO, or FAILED_PROCESSING_VIDEO for a refused type or size), as Threads downloads video
 * while processing; an image that cannot be used is refused at creation (type 36001/2207005, size 36000/2207004, as
 * Instagram); the publishing-limit error (undocumented) is 9/2207042 as Instagram's, publishing a container not
 * FINISHED is 9007/2207027, a second publish of a PUBLISHED container is refused (100) and counted in
 * `publishCalls`; carousel children must be FINISHED when the carousel is created; a reply needs a published media id
 * (a container id is refused); `alt_text` at most 1,000 characters, images and videos only; a throttled account answers
 * code 4 (Threads documents no throttle code) with X-Business-Use-Case-Usage `type: "threads"`; expired tokens answer
 * 190/463 like Instagram's (trypostit/trypost#230 saw "The requested resource does not exist" instead).
 * Faults a test plans are taken by the next matching request, in order. No timers: the clock is read on demand.
 */

export type ThreadsUser = MetaUser;

export type ThreadsContainerState = 'IN_PROGRESS' | 'FINISHED' | 'ERROR' | 'EXPIRED' | 'PUBLISHED';

export interface ThreadsContainer {
  id: string;
  userId: string;
  mediaType: 'TEXT' | 'IMAGE' | 'VIDEO' | 'CAROUSEL';
  isCarouselItem: boolean;
  /** The media URL fetched (null for text and carousels). */
  url: string | null;
  /** Carousel item container ids. */
  children: string[];
  text: string | null;
  replyToId: string | null;
  replyControl: string | null;
  topicTag: string | null;
  linkAttachment: string | null;
  altText: string | null;
  state: ThreadsContainerState;
  /** Polls left to answer IN_PROGRESS. */
  pollsLeft: number;
  /** The error_message this container is to end with (a planned failure or a failed video download). */
  failure: string | null;
  /** By the fake's clock, in ms. */
  createdAt: number;
  mediaId: string | null;
  /** threads_publish calls naming it (a second one on a PUBLISHED container is refused). */
  publishCalls: number;
}

export interface ThreadsPost {
  id: string;
  userId: string;
  containerId: string;
  /** Threads' media_type of the published media. */
  mediaType: 'TEXT_POST' | 'IMAGE' | 'VIDEO' | 'CAROUSEL_ALBUM';
  text: string | null;
  /** Every item: the carousel's children, or the one image or video (empty for text). */
  children: { mediaType: 'IMAGE' | 'VIDEO'; url: string }[];
  replyToId: string | null;
  /** The first post of the thread this reply belongs to (its own id for a post). */
  rootPostId: string;
  replyControl: string | null;
  topicTag: string | null;
  linkAttachment: string | null;
  /** Alt text per item, in `children` order. */
  altTexts: (string | null)[];
  /** Meta's format: `2026-11-27T13:00:00+0000`. */
  timestamp: string;
  permalink: string;
  shortcode: string;
  /** By the fake's clock, in ms. */
  publishedAt: number;
}

/** token: /oauth/access_token, /access_token, /refresh_access_token; me: GET /me and GET /{user-id}; container: POST
 * /{user}/threads; status: GET /{container-id}; media: GET /{media-id}; publish: POST threads_publish; limit: GET
 * threads_publishing_limit; list: GET /{user}/threads and /{user}/replies. */
export type ThreadsFaultTarget = 'token' | 'me' | 'container' | 'status' | 'media' | 'publish' | 'limit' | 'list';

export interface ThreadsFakeOptions {
  clientId?: string;
  clientSecret?: string;
  /** The fake's clock in ms; Date.now by default. */
  now?: () => number;
  /** Polls answered IN_PROGRESS for text, image and carousel containers; 1 by default. */
  imagePolls?: number;
  /** Polls answered IN_PROGRESS for video containers; 2 by default. */
  videoPolls?: number;
  /** Posts per rolling 24 hours; 250 by default. */
  postQuota?: number;
  /** Replies per rolling 24 hours; 1,000 by default. */
  replyQuota?: number;
}

export interface ThreadsFake {
  /** Stands for threads.com and graph.threads.net alike. */
  url: string;
  clientId: string;
  clientSecret: string;
  addUser(user: { username: string; name?: string }): ThreadsUser;
  consentAs(user: ThreadsUser): void;
  refuseNextConsent(): void;
  /** A long-lived token issued now (all three scopes unless told), without the round trip; times as ISO 8601. */
  grant(user: ThreadsUser, scopes?: string[]): { accessToken: string; expiresAt: string; issuedAt: string };
  /** The user removes the app: their tokens answer 190/460. */
  revokeApp(user: ThreadsUser): void;
  /** Every token issued so far is expired (190/463). */
  expireAccessTokens(): void;
  refreshes(): number;
  /** The account (every account when none is named) answers throttled for this many minutes of the fake's clock. */
  throttle(minutes: number, user?: ThreadsUser): void;
  /** The next container created ends in ERROR with this error_message (FAILED_PROCESSING_VIDEO by default). */
  failNextContainer(errorMessage?: string): void;
  imagePolls: number;
  videoPolls: number;
  postQuota: number;
  replyQuota: number;
  authorizations: MetaAuthorization[];
  /** Published posts and replies, in order. */
  posts: ThreadsPost[];
  containers: Map<string, ThreadsContainer>;
  requests: MetaRecordedRequest[];
  fetches: MetaFetchRecord[];
  fail(on: ThreadsFaultTarget, fault: MetaFault): void;
  advance(ms: number): void;
  close(): Promise<void>;
}

const BASIC = 'threads_basic';
const PUBLISH = 'threads_content_publish';
const REPLIES = 'threads_manage_replies';
const KNOWN_SCOPES = [
  BASIC,
  PUBLISH,
  REPLIES,
  'threads_read_replies',
  'threads_manage_insights',
  'threads_delete',
  'threads_keyword_search',
  'threads_manage_mentions',
];
const TYPE = 'THApiException';
const MAX_TEXT = 500;
const MAX_LINKS = 5;
const MAX_ALT_TEXT = 1_000;
const REPLY_CONTROLS = ['everyone', 'accounts_you_follow', 'mentioned_only', 'parent_post_author_only', 'followers_only'];
const IMAGE_RULES = { accept: ['image/jpeg', 'image/png'], maxBytes: 8 * MIB };
const VIDEO_RULES = { accept: ['video/mp4', 'video/quicktime'], maxBytes: 1024 * MIB };
const CONTAINER_FIELDS = ['status', 'error_message'];
const MEDIA_FIELDS = [
  'media_product_type',
  'media_type',
  'media_url',
  'permalink',
  'owner',
  'username',
  'text',
  'timestamp',
  'shortcode',
  'children',
  'is_quote_post',
  'has_replies',
  'is_reply',
  'is_reply_owned_by_me',
  'root_post',
  'replied_to',
  'reply_audience',
  'topic_tag',
  'link_attachment_url',
  'alt_text',
];
const USER_FIELDS = ['username', 'name', 'threads_profile_picture_url', 'threads_biography', 'is_verified'];
const LIMIT_FIELDS = ['quota_usage', 'config', 'reply_quota_usage', 'reply_config', 'delete_quota_usage', 'delete_config'];

// The joiner, selector and keycap are listed as their own alternatives: inside a class they would read as combining marks.
const EMOJI = /[\p{Extended_Pictographic}\p{Regional_Indicator}\p{Emoji_Modifier}\u{E0020}-\u{E007F}]|\u200D|\uFE0F|\u20E3/u;

/** Threads' text length: one per character, but emoji (and the joiners and selectors of emoji sequences) count their
 * UTF-8 bytes. */
export function threadsTextLength(text: string): number {
  let length = 0;
  for (const ch of text) length += EMOJI.test(ch) ? Buffer.byteLength(ch, 'utf8') : 1;
  return length;
}

export async function startThreadsFake(options: ThreadsFakeOptions = {}): Promise<ThreadsFake> {
  const clientId = options.clientId ?? String(1_000_000_000_000_000 + Math.floor(Math.random() * 99_999_999_999));
  const clientSecret = options.clientSecret ?? randomBytes(16).toString('hex');
  let offsetMs = 0;
  const now = () => (options.now?.() ?? Date.now()) + offsetMs;

  const users = new Map<string, ThreadsUser>();
  const posts: ThreadsPost[] = [];
  const containers = new Map<string, ThreadsContainer>();
  const fetches: MetaFetchRecord[] = [];
  const postTimes = new Map<string, number[]>();
  const replyTimes = new Map<string, number[]>();
  const plannedFailures: string[] = [];
  const faults = new FaultQueue<ThreadsFaultTarget>();
  const recorder = createRecorder();
  const tokens = new MetaTokenStore(now, 'THAA');
  const usage = createUsageMeter({ now, type: 'threads' });
  let imagePolls = options.imagePolls ?? 1;
  let videoPolls = options.videoPolls ?? 2;
  let postQuota = options.postQuota ?? 250;
  let replyQuota = options.replyQuota ?? 1_000;
  // Above 2^53, like the documented example: a client that reads user_id as a double gets it wrong.
  const userIds = numericIds(17_841_405_793_187_219n);
  const containerIds = numericIds(17_889_615_691_921_001n);
  const mediaIds = numericIds(18_050_206_876_707_001n);

  const app = await createMetaApp();

  const login = installMetaLogin({
    app,
    recorder,
    faults,
    target: 'token',
    tokens,
    now,
    clientId,
    clientSecret,
    users,
    requiredScope: BASIC,
    knownScopes: KNOWN_SCOPES,
    exchangeGrant: 'th_exchange_token',
    refreshGrant: 'th_refresh_token',
    // Written by hand: user_id is a JSON number, as documented.
    codeAnswer: (token: MetaToken) => ({ status: 200, body: `{"access_token":${JSON.stringify(token.token)},"user_id":${token.userId}}` }),
  });

  // --- Helpers ---------------------------------------------------------------------------------

  const error = (fields: Omit<MetaErrorFields, 'type'>, status = 400) => metaError({ ...fields, type: TYPE }, status);
  const invalid = (message: string, subcode?: number) =>
    error({ message: message.startsWith('(#') ? message : `(#100) ${message}`, code: 100, ...(subcode === undefined ? {} : { error_subcode: subcode }) });

  const userOfToken = (token: string | undefined) => {
    const found = tokens.get(token);
    return found === undefined ? undefined : users.get(found.userId);
  };

  const authed = (ctx: MetaRouteContext, scopes: string[]): ThreadsUser | MetaAnswer => {
    const token = tokens.check(ctx.token);
    if (isMetaAnswer(token)) return token;
    const user = users.get(token.userId);
    if (user === undefined) return metaErrors.invalidToken();
    usage.count(user.id);
    if (usage.throttledFor(user.id) > 0) return metaErrors.appThrottled();
    const missing = scopes.find((s) => !token.scopes.includes(s));
    if (missing !== undefined) return metaErrors.permission(`Application does not have permission for this action (${missing})`);
    return user;
  };

  const isSelf = (user: ThreadsUser, id: string | undefined) => id === 'me' || id === user.id;

  const usageHeaders = (ctx: MetaRouteContext) => {
    const user = userOfToken(ctx.token);
    return user === undefined ? {} : usage.header(user.id);
  };

  const expire = (c: ThreadsContainer) => {
    if ((c.state === 'IN_PROGRESS' || c.state === 'FINISHED') && now() - c.createdAt >= DAY_MS) c.state = 'EXPIRED';
  };

  const poll = (c: ThreadsContainer) => {
    expire(c);
    if (c.state !== 'IN_PROGRESS') return;
    if (c.pollsLeft > 0) c.pollsLeft -= 1;
    else c.state = c.failure === null ? 'FINISHED' : 'ERROR';
  };

  const notReady = () =>
    error({
      message: 'Media ID is not available',
      code: 9007,
      error_subcode: 2207027,
      error_user_title: 'Media not ready for publishing',
      error_user_msg: 'The media is not ready for publishing, please wait for a moment',
    });

  const postById = (id: string | undefined) => posts.find((p) => p.id === id);

  const mediaNode = (p: ThreadsPost, viewer: ThreadsUser): Record<string, unknown> => {
    const user = users.get(p.userId);
    return {
      id: p.id,
      media_product_type: 'THREADS',
      media_type: p.mediaType,
      media_url: p.mediaType === 'IMAGE' || p.mediaType === 'VIDEO' ? p.children[0]?.url : undefined,
      permalink: p.permalink,
      owner: { id: p.userId },
      username: user?.username,
      text: p.text ?? undefined,
      timestamp: p.timestamp,
      shortcode: p.shortcode,
      children: p.mediaType === 'CAROUSEL_ALBUM' ? { data: p.children.map((_c, i) => ({ id: `${p.id}${i + 1}` })) } : undefined,
      is_quote_post: false,
      has_replies: posts.some((q) => q.replyToId === p.id),
      is_reply: p.replyToId !== null,
      is_reply_owned_by_me: p.replyToId === null ? undefined : p.userId === viewer.id,
      root_post: p.replyToId === null ? undefined : { id: p.rootPostId },
      replied_to: p.replyToId === null ? undefined : { id: p.replyToId },
      reply_audience: (p.replyControl ?? 'everyone').toUpperCase(),
      topic_tag: p.topicTag ?? undefined,
      link_attachment_url: p.linkAttachment ?? undefined,
      alt_text: p.mediaType === 'IMAGE' || p.mediaType === 'VIDEO' ? (p.altTexts[0] ?? undefined) : undefined,
    };
  };

  const userNode = (user: ThreadsUser): Record<string, unknown> => ({
    id: user.id,
    username: user.username,
    name: user.name,
    threads_biography: '',
    is_verified: false,
  });

  /** Fetches the media as Meta does: for an image, null or the error at creation; for a video, the error_message the
   * container will end with (null when fine). */
  const fetchImage = async (url: string): Promise<MetaAnswer | null> => {
    const result = await fetchMediaLikeMeta(url, IMAGE_RULES);
    fetches.push(toFetchRecord(result));
    if (result.ok) return null;
    if (result.reason === 'type')
      return error({
        message: 'The image format is not supported',
        code: 36001,
        error_subcode: 2207005,
        error_user_title: 'Unsupported format',
        error_user_msg: `The image format is not supported. Supported formats are: JPEG, PNG (${result.detail}).`,
      });
    if (result.reason === 'size')
      return error({
        message: 'The image size is too large',
        code: 36000,
        error_subcode: 2207004,
        error_user_title: 'Image is too large',
        error_user_msg: `The image is too large to download. It should be less than 8 MB (${result.detail}).`,
      });
    return error({
      message: 'An unknown error occurred',
      code: 1,
      error_subcode: 2207052,
      error_user_title: 'Media download has failed.',
      error_user_msg: `The media could not be fetched from this URI: ${url} (${result.detail})`,
    });
  };

  const fetchVideo = async (url: string): Promise<string | null> => {
    const result = await fetchMediaLikeMeta(url, VIDEO_RULES);
    fetches.push(toFetchRecord(result));
    if (result.ok) return null;
    return result.reason === 'type' || result.reason === 'size' ? 'FAILED_PROCESSING_VIDEO' : 'FAILED_DOWNLOADING_VIDEO';
  };

  // --- Users -----------------------------------------------------------------------------------

  metaRoute(app, {
    method: 'GET',
    url: versioned('/me'),
    target: 'me',
    recorder,
    faults,
    headers: usageHeaders,
    handle: (ctx) => {
      const user = authed(ctx, [BASIC]);
      if (isMetaAnswer(user)) return user;
      return pickFields(userNode(user), USER_FIELDS, parseFields(ctx.query.fields), TYPE);
    },
  });

  metaRoute(app, {
    method: 'GET',
    url: versioned('/:id'),
    target: (ctx) => (containers.has(ctx.params.id ?? '') ? 'status' : users.has(ctx.params.id ?? '') ? 'me' : 'media'),
    recorder,
    faults,
    headers: usageHeaders,
    handle: (ctx) => {
      const user = authed(ctx, [BASIC]);
      if (isMetaAnswer(user)) return user;
      const id = ctx.params.id ?? '';
      const fields = parseFields(ctx.query.fields);
      if (isSelf(user, id)) return pickFields(userNode(user), USER_FIELDS, fields, TYPE);
      const container = containers.get(id);
      if (container !== undefined && container.userId === user.id) {
        poll(container);
        const node = { id, status: container.state, error_message: container.state === 'ERROR' ? (container.failure ?? 'UNKNOWN') : undefined };
        return pickFields(node, CONTAINER_FIELDS, fields, TYPE);
      }
      const found = postById(id);
      if (found !== undefined && found.userId === user.id) return pickFields(mediaNode(found, user), MEDIA_FIELDS, fields, TYPE);
      return metaErrors.unsupportedGet(id);
    },
  });

  // --- Containers ------------------------------------------------------------------------------

  metaRoute(app, {
    method: 'POST',
    url: versioned('/:id/threads'),
    target: 'container',
    recorder,
    faults,
    headers: usageHeaders,
    handle: async (ctx) => {
      const p = ctx.query;
      const user = authed(ctx, p.reply_to_id === undefined ? [BASIC, PUBLISH] : [BASIC, PUBLISH, REPLIES]);
      if (isMetaAnswer(user)) return user;
      if (!isSelf(user, ctx.params.id)) return metaErrors.unsupportedPost(ctx.params.id ?? '');
      const type = p.media_type;
      if (type === undefined) return invalid('(#100) The parameter media_type is required');
      if (type !== 'TEXT' && type !== 'IMAGE' && type !== 'VIDEO' && type !== 'CAROUSEL')
        return invalid(`Param media_type must be one of {TEXT, IMAGE, VIDEO, CAROUSEL}`);
      const isItem = p.is_carousel_item === 'true';
      if (isItem && (type === 'TEXT' || type === 'CAROUSEL')) return invalid('Only IMAGE and VIDEO containers can be carousel items');
      if (isItem && p.reply_to_id !== undefined) return invalid('A carousel item cannot be a reply');

      const text = p.text;
      if (text !== undefined) {
        if (threadsTextLength(text) > MAX_TEXT) return invalid(`Param text must be at most ${MAX_TEXT} characters long.`);
      } else if (type === 'TEXT') return invalid('(#100) The parameter text is required');
      if (p.link_attachment !== undefined) {
        if (type !== 'TEXT') return invalid('Param link_attachment is only supported on TEXT posts');
        if (!/^https?:\/\/\S+$/.test(p.link_attachment)) return invalid('Param link_attachment must be a URL');
      }
      const links = new Set([
        ...(text?.match(/https?:\/\/[^\s<>"]+/g) ?? []).map((l) => l.replace(/[.,:;!?'")\]]+$/u, '')),
        ...(p.link_attachment === undefined ? [] : [p.link_attachment]),
      ]);
      if (links.size > MAX_LINKS)
        return error({
          message: 'THREADS_API__LINK_LIMIT_EXCEEDED',
          code: 100,
          error_user_title: 'Too many links',
          error_user_msg: `A post can contain at most ${MAX_LINKS} unique links (it has ${links.size}).`,
        });
      if (p.reply_control !== undefined && !REPLY_CONTROLS.includes(p.reply_control))
        return invalid(`Param reply_control must be one of {${REPLY_CONTROLS.join(', ')}}`);
      if (p.topic_tag !== undefined && ([...p.topic_tag].length < 1 || [...p.topic_tag].length > 50 || /[.&]/.test(p.topic_tag)))
        return invalid('Param topic_tag must be 1 to 50 characters, without periods (.) or ampersands (&)');
      if (p.alt_text !== undefined) {
        if (type !== 'IMAGE' && type !== 'VIDEO') return invalid('Param alt_text is only supported on IMAGE and VIDEO');
        if ([...p.alt_text].length > MAX_ALT_TEXT) return invalid(`Param alt_text must be at most ${MAX_ALT_TEXT} characters long.`);
      }

      let replyToId: string | null = null;
      if (p.reply_to_id !== undefined) {
        const parent = postById(p.reply_to_id);
        if (parent === undefined) return invalid(`Param reply_to_id must be the id of a published Threads media (${p.reply_to_id} is not)`);
        const root = postById(parent.rootPostId) ?? parent;
        if (root.userId !== user.id) return error({ message: '(#10) To reply to a thread, you must be the owner of the root post', code: 10 }, 403);
        replyToId = parent.id;
      }

      let children: string[] = [];
      let url: string | null = null;
      let failure: string | null = null;
      if (type === 'CAROUSEL') {
        const ids = parseIdList(p.children);
        if (ids === undefined || ids.length < 2 || ids.length > 20) return invalid('Param children must list 2 to 20 carousel item containers');
        for (const childId of ids) {
          const child = containers.get(childId);
          if (child !== undefined) expire(child);
          if (
            child === undefined ||
            child.userId !== user.id ||
            !child.isCarouselItem ||
            child.state === 'ERROR' ||
            child.state === 'EXPIRED' ||
            child.state === 'PUBLISHED'
          )
            return invalid(`Param children: ${childId} is not a usable carousel item container of this user`);
          if (child.state !== 'FINISHED') return notReady();
        }
        children = ids;
      } else if (type === 'IMAGE') {
        if (p.image_url === undefined) return invalid('(#100) The parameter image_url is required');
        url = p.image_url;
        const problem = await fetchImage(url);
        if (problem !== null) return problem;
      } else if (type === 'VIDEO') {
        if (p.video_url === undefined) return invalid('(#100) The parameter video_url is required');
        url = p.video_url;
        failure = await fetchVideo(url);
      }

      const polls = type === 'VIDEO' ? videoPolls : imagePolls;
      // A planned failure is taken by the next container created, even one that fails on its own.
      const planned = plannedFailures.shift() ?? null;
      failure = failure ?? planned;
      const container: ThreadsContainer = {
        id: containerIds(),
        userId: user.id,
        mediaType: type,
        isCarouselItem: isItem,
        url,
        children,
        text: text ?? null,
        replyToId,
        replyControl: p.reply_control ?? null,
        topicTag: p.topic_tag ?? null,
        linkAttachment: p.link_attachment ?? null,
        altText: p.alt_text ?? null,
        state: polls > 0 ? 'IN_PROGRESS' : failure === null ? 'FINISHED' : 'ERROR',
        pollsLeft: polls,
        failure,
        createdAt: now(),
        mediaId: null,
        publishCalls: 0,
      };
      containers.set(container.id, container);
      return { status: 200, body: { id: container.id } };
    },
  });

  // --- Publishing ------------------------------------------------------------------------------

  metaRoute(app, {
    method: 'POST',
    url: versioned('/:id/threads_publish'),
    target: 'publish',
    recorder,
    faults,
    headers: usageHeaders,
    handle: (ctx) => {
      const user = authed(ctx, [BASIC, PUBLISH]);
      if (isMetaAnswer(user)) return user;
      if (!isSelf(user, ctx.params.id)) return metaErrors.unsupportedPost(ctx.params.id ?? '');
      const creationId = ctx.query.creation_id;
      if (creationId === undefined) return invalid('(#100) The parameter creation_id is required');
      const c = containers.get(creationId);
      if (c === undefined || c.userId !== user.id) return invalid(`Param creation_id: ${creationId} is not a media container of this user`);
      c.publishCalls += 1;
      if (c.isCarouselItem) return invalid('A carousel item cannot be published on its own; publish its carousel');
      if (c.replyToId !== null && !tokens.get(ctx.token)?.scopes.includes(REPLIES))
        return metaErrors.permission(`Application does not have permission for this action (${REPLIES})`);
      expire(c);
      if (c.state === 'PUBLISHED') return invalid('(#100) This media container has already been published');
      const reply = c.replyToId !== null;
      const times = (reply ? replyTimes : postTimes).get(user.id) ?? [];
      const quota = reply ? replyQuota : postQuota;
      if (countSince(times, now() - DAY_MS) >= quota)
        return error({
          message: 'Application request limit reached',
          code: 9,
          error_subcode: 2207042,
          error_user_title: reply ? 'Reply limit reached' : 'Publishing limit reached',
          error_user_msg: `You have reached the maximum of ${quota} ${reply ? 'replies' : 'posts'} per 24 hours.`,
        });
      if (c.state === 'EXPIRED') return invalid('The media container has expired; create a new one', 2207020);
      if (c.state !== 'FINISHED') return notReady();

      const items = c.mediaType === 'CAROUSEL' ? c.children.map((id) => containers.get(id)!) : c.mediaType === 'TEXT' ? [] : [c];
      const id = mediaIds();
      const shortcode = randomBytes(8).toString('base64url').slice(0, 11);
      const parent = c.replyToId === null ? undefined : postById(c.replyToId);
      posts.push({
        id,
        userId: user.id,
        containerId: c.id,
        mediaType: c.mediaType === 'TEXT' ? 'TEXT_POST' : c.mediaType === 'CAROUSEL' ? 'CAROUSEL_ALBUM' : c.mediaType,
        text: c.text,
        children: items.map((item) => ({ mediaType: item.mediaType === 'VIDEO' ? 'VIDEO' : 'IMAGE', url: item.url ?? '' })),
        replyToId: c.replyToId,
        rootPostId: parent === undefined ? id : parent.rootPostId,
        replyControl: c.replyControl,
        topicTag: c.topicTag,
        linkAttachment: c.linkAttachment,
        altTexts: items.map((item) => item.altText),
        timestamp: metaTimestamp(now()),
        permalink: `https://www.threads.com/@${user.username}/post/${shortcode}`,
        shortcode,
        publishedAt: now(),
      });
      c.state = 'PUBLISHED';
      c.mediaId = id;
      for (const child of c.children) {
        const item = containers.get(child);
        if (item !== undefined) item.state = 'PUBLISHED';
      }
      (reply ? replyTimes : postTimes).set(user.id, [...times, now()]);
      return { status: 200, body: { id } };
    },
  });

  metaRoute(app, {
    method: 'GET',
    url: versioned('/:id/threads_publishing_limit'),
    target: 'limit',
    recorder,
    faults,
    headers: usageHeaders,
    handle: (ctx) => {
      const user = authed(ctx, [BASIC, PUBLISH]);
      if (isMetaAnswer(user)) return user;
      if (!isSelf(user, ctx.params.id)) return metaErrors.unsupportedGet(ctx.params.id ?? '');
      const fields = parseFields(ctx.query.fields);
      const unknown = fields.find((f) => !LIMIT_FIELDS.includes(f));
      if (unknown !== undefined) return metaErrors.nonexistingField(unknown, TYPE);
      if (fields.some((f) => f.startsWith('reply_')) && !tokens.get(ctx.token)?.scopes.includes(REPLIES))
        return metaErrors.permission(`Application does not have permission for this action (${REPLIES})`);
      const since = now() - DAY_MS;
      const all: Record<string, unknown> = {
        quota_usage: countSince(postTimes.get(user.id) ?? [], since),
        config: { quota_total: postQuota, quota_duration: 86_400 },
        reply_quota_usage: countSince(replyTimes.get(user.id) ?? [], since),
        reply_config: { quota_total: replyQuota, quota_duration: 86_400 },
        delete_quota_usage: 0,
        delete_config: { quota_total: 100, quota_duration: 86_400 },
      };
      const entry: Record<string, unknown> = {};
      for (const f of fields.length === 0 ? ['quota_usage'] : fields) entry[f] = all[f];
      return { status: 200, body: { data: [entry] } };
    },
  });

  // --- Lists -----------------------------------------------------------------------------------

  const list = (ctx: MetaRouteContext, replies: boolean): MetaAnswer => {
    const user = authed(ctx, [BASIC]);
    if (isMetaAnswer(user)) return user;
    if (!isSelf(user, ctx.params.id)) return metaErrors.unsupportedGet(ctx.params.id ?? '');
    const fields = parseFields(ctx.query.fields);
    const unknown = fields.find((f) => !MEDIA_FIELDS.includes(f.replace(/\{.*$/, '')) && f !== 'id');
    if (unknown !== undefined) return metaErrors.nonexistingField(unknown, TYPE);
    const limit = ctx.query.limit === undefined ? 25 : Number(ctx.query.limit);
    if (!Number.isInteger(limit) || limit < 1) return invalid('Param limit must be a positive integer');
    const since = ctx.query.since === undefined ? -Infinity : Number(ctx.query.since) * 1000;
    const until = ctx.query.until === undefined ? Infinity : Number(ctx.query.until) * 1000;
    const all = posts
      .filter((p) => p.userId === user.id && (p.replyToId !== null) === replies)
      .filter((p) => p.publishedAt >= since && p.publishedAt <= until)
      .reverse();
    const cursor = (id: string) => Buffer.from(id).toString('base64url');
    let from = 0;
    if (ctx.query.after !== undefined) {
      const afterId = Buffer.from(ctx.query.after, 'base64url').toString();
      const index = all.findIndex((p) => p.id === afterId);
      if (index === -1) return invalid('Param after is not a valid cursor');
      from = index + 1;
    }
    const page = all.slice(from, from + Math.min(limit, 100));
    const data = page.map((p) => (pickFields(mediaNode(p, user), MEDIA_FIELDS, fields, TYPE).body ?? {}) as Record<string, unknown>);
    if (page.length === 0) return { status: 200, body: { data, paging: {} } };
    const more = from + page.length < all.length;
    const next = new URL(`http://127.0.0.1${ctx.req.url}`);
    next.searchParams.delete('access_token');
    next.searchParams.set('after', cursor(page[page.length - 1]!.id));
    return {
      status: 200,
      body: {
        data,
        paging: {
          cursors: { before: cursor(page[0]!.id), after: cursor(page[page.length - 1]!.id) },
          ...(more ? { next: `${url}${next.pathname}${next.search}` } : {}),
        },
      },
    };
  };

  metaRoute(app, { method: 'GET', url: versioned('/:id/threads'), target: 'list', recorder, faults, headers: usageHeaders, handle: (ctx) => list(ctx, false) });
  metaRoute(app, { method: 'GET', url: versioned('/:id/replies'), target: 'list', recorder, faults, headers: usageHeaders, handle: (ctx) => list(ctx, true) });

  const url = await listenLocal(app);

  const userOf = (user: ThreadsUser) => {
    const found = users.get(user.id);
    if (found === undefined) throw new Error(`no user ${user.id}`);
    return found;
  };

  return {
    url,
    clientId,
    clientSecret,
    addUser({ username, name }) {
      const user = { id: userIds(), username, name: name ?? username };
      users.set(user.id, user);
      return { ...user };
    },
    consentAs: (user) => login.consentAs(userOf(user).id),
    refuseNextConsent: () => login.refuseNextConsent(),
    grant(user, scopes = [BASIC, PUBLISH, REPLIES]) {
      const token = login.grant(userOf(user).id, scopes);
      return { accessToken: token.token, expiresAt: new Date(token.expiresAt).toISOString(), issuedAt: new Date(token.issuedAt).toISOString() };
    },
    revokeApp: (user) => tokens.killUser(userOf(user).id),
    expireAccessTokens: () => tokens.expireAll(),
    refreshes: () => login.refreshes(),
    throttle(minutes, user) {
      for (const u of user === undefined ? [...users.values()] : [userOf(user)]) usage.throttle(u.id, minutes);
    },
    failNextContainer(errorMessage = 'FAILED_PROCESSING_VIDEO') {
      plannedFailures.push(errorMessage);
    },
    get imagePolls() {
      return imagePolls;
    },
    set imagePolls(polls: number) {
      imagePolls = polls;
    },
    get videoPolls() {
      return videoPolls;
    },
    set videoPolls(polls: number) {
      videoPolls = polls;
    },
    get postQuota() {
      return postQuota;
    },
    set postQuota(quota: number) {
      postQuota = quota;
    },
    get replyQuota() {
      return replyQuota;
    },
    set replyQuota(quota: number) {
      replyQuota = quota;
    },
    authorizations: login.authorizations,
    posts,
    containers,
    requests: recorder.requests,
    fetches,
    fail(on, fault) {
      faults.push(on, fault);
    },
    advance(ms) {
      offsetMs += ms;
    },
    close: () => app.close(),
  };
}
