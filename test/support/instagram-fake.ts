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
  type MetaFault,
  type MetaFetchRecord,
  type MetaRecordedRequest,
  type MetaRouteContext,
  type MetaToken,
} from './meta-fake-kit.js';

/**
 * An in-process Instagram (Instagram API with Instagram Login), written from its documentation, for the calls Herald
 * makes. `url` stands for www.instagram.com (the consent page), api.instagram.com (the code exchange) and
 * graph.instagram.com (everything else): the paths do not collide. Graph paths take any `/v<d>.<d>/` prefix.
 * - developers.facebook.com/documentation/instagram-platform/instagram-api-with-instagram-login/business-login (Updated
 *   Mar 13, 2026): GET /oauth/authorize (client_id, redirect_uri, response_type=code, comma-separated scope, state) back
 *   to `redirect_uri?code=…#_`, or `error=access_denied&error_reason=user_denied&error_description=…`; the code "is valid
 *   for 1 hour and can only be used once"; POST /oauth/access_token (form) answers
 *   `{"data":[{"access_token","user_id","permissions"}]}` (the older flat `{access_token,user_id,permissions}` is gone
 *   from the current page), a rejection `{"error_type":"OAuthException","code":400,"error_message":"Matching code was
 *   not found or was already used"}`; GET /access_token?grant_type=ig_exchange_token → `{access_token, token_type:
 *   "bearer", expires_in: 5183944}`;
 * - …/instagram-platform/reference/access_token (Updated Mar 9, 2026) and …/reference/refresh_access_token (Updated Jul
 *   17, 2025): a refresh takes a long-lived token "at least 24 hours old but has not expired", valid 60 days from then;
 * - …/instagram-platform/content-publishing: "We cURL media", JPEG the only image format, `alt_text` (since 2025-03-24)
 *   for images only, carousels up to 10 and counted as one post, 100 posts per 24 h in the guide (the media_publish
 *   reference says 50: `publishQuota` defaults to 50), resumable uploads only for Facebook Login apps;
 * - …/instagram-platform/instagram-graph-api/reference/ig-user/media: containers expire after 24 hours, 400 containers
 *   per rolling 24 hours; `image_url`, `video_url`, `media_type` (REELS, STORIES, CAROUSEL, VIDEO for carousel items),
 *   `is_carousel_item`, `children`, `caption`, `collaborators` (≤ 3), `location_id`, `share_to_feed`, `thumb_offset`,
 *   `cover_url`; GET lists the user's media;
 * - …/reference/ig-container: `status_code` IN_PROGRESS | FINISHED | ERROR | EXPIRED | PUBLISHED, `status` on error;
 * - …/reference/ig-user/media_publish (`creation_id`), …/reference/ig-user/content_publishing_limit.md
 *   (`{data:[{quota_usage, config:{quota_total, quota_duration:86400}}]}`), …/reference/ig-media/comments (`message`);
 * - …/instagram-platform/instagram-graph-api/reference/error-codes (Updated Jun 2, 2026): 9004/2207052 media not fetched,
 *   -2/2207003 download timed out, -2/2207020 expired, 9007/2207027 not ready, 9/2207042 daily limit, 36000/2207004 image
 *   > 8 MiB, 36001/2207005 image format, 352/2207026 video format, 36004/2207010 caption (2,200 characters, 30 hashtags,
 *   20 @-tags), 100/2207028 carousel 2–10, 100/2207023 unknown media type;
 * - developers.facebook.com/docs/graph-api/overview/rate-limiting: X-Business-Use-Case-Usage (`type: instagram`);
 *   80002 answered as HTTP 400 (trypostit/trypost#281).
 * Seen in the wild, not documented (the fake's word): a container's `status` "Error: Media upload has failed with error
 * code 2207026" and "Finished: …"/"In Progress: …" texts; the messages of the errors above (only codes are documented).
 * Choices of the fake: processing moves per poll (`imagePolls`/`videoPolls` IN_PROGRESS answers, then FINISHED or the
 * planned ERROR), any GET of a container counts as a poll; a carousel's children must be FINISHED when the carousel is
 * created (else 9007/2207027); a second media_publish of a PUBLISHED container is refused (100, undocumented) and
 * counted in `publishCalls`; over 400 containers answers code 4; `media_type=IMAGE` is taken as an image;
 * `alt_text` on anything but an image, `cover_url`/`share_to_feed` off reels and collaborators on stories are refused
 * (100); a video fetch is capped at 300 MiB and a type or size refusal is 352/2207026; stories are listed at
 * /{ig-user-id}/stories, not /media; comments are refused on stories; the code exchange's `user_id` is the app-scoped id
 * (`id` of /me), and Graph paths take either it, the professional account id (`user_id` of /me) or `me`; a throttled
 * account answers 80002 until `throttle`'s minutes pass by the fake's clock.
 * Faults a test plans are taken by the next matching request, in order. No timers: the clock is read on demand.
 */

export interface InstagramUser {
  /** The professional account id (IG_ID, `user_id` of /me): numeric, as a string. */
  id: string;
  /** The app-scoped id (`id` of /me, `user_id` of the code exchange). */
  appScopedId: string;
  username: string;
  name: string;
}

export type InstagramContainerState = 'IN_PROGRESS' | 'FINISHED' | 'ERROR' | 'EXPIRED' | 'PUBLISHED';

export interface InstagramContainer {
  id: string;
  userId: string;
  kind: 'IMAGE' | 'VIDEO' | 'CAROUSEL';
  mediaProductType: 'FEED' | 'REELS' | 'STORY';
  isCarouselItem: boolean;
  /** The media URL fetched (null for a carousel). */
  url: string | null;
  /** Carousel item container ids. */
  children: string[];
  caption: string | null;
  altText: string | null;
  collaborators: string[];
  locationId: string | null;
  shareToFeed: boolean | null;
  thumbOffset: number | null;
  coverUrl: string | null;
  state: InstagramContainerState;
  /** Polls left to answer IN_PROGRESS. */
  pollsLeft: number;
  /** The error subcode this container is to end with, when a test planned one. */
  failure: number | null;
  /** By the fake's clock, in ms. */
  createdAt: number;
  /** The media it became. */
  mediaId: string | null;
  /** media_publish calls naming it (a second one on a PUBLISHED container is refused). */
  publishCalls: number;
}

export interface InstagramMediaItem {
  mediaType: 'IMAGE' | 'VIDEO';
  url: string;
}

export interface InstagramMedia {
  id: string;
  userId: string;
  containerId: string;
  mediaProductType: 'FEED' | 'REELS' | 'STORY';
  mediaType: 'IMAGE' | 'VIDEO' | 'CAROUSEL_ALBUM';
  caption: string | null;
  /** Every item: the carousel's children, or the one image or video. */
  children: InstagramMediaItem[];
  collaborators: string[];
  locationId: string | null;
  shareToFeed: boolean | null;
  thumbOffset: number | null;
  /** Alt text per item, in `children` order. */
  altTexts: (string | null)[];
  /** Meta's format: `2026-11-27T13:00:00+0000`. */
  timestamp: string;
  permalink: string;
  shortcode: string;
  comments: { id: string; text: string }[];
  /** By the fake's clock, in ms. */
  publishedAt: number;
}

/** token: /oauth/access_token, /access_token, /refresh_access_token; me: GET /me and GET /{ig-user-id}; container: POST
 * /{ig-user-id}/media; status: GET /{container-id}; media: GET /{media-id}; publish: POST media_publish; limit: GET
 * content_publishing_limit; list: GET /{ig-user-id}/media and /stories; comment: POST /{media-id}/comments. */
export type InstagramFaultTarget = 'token' | 'me' | 'container' | 'status' | 'media' | 'publish' | 'limit' | 'list' | 'comment';

export interface InstagramFakeOptions {
  clientId?: string;
  clientSecret?: string;
  /** The fake's clock in ms; Date.now by default. */
  now?: () => number;
  /** Polls answered IN_PROGRESS for an image (or carousel) container; 1 by default. */
  imagePolls?: number;
  /** Polls answered IN_PROGRESS for a video container; 2 by default. */
  videoPolls?: number;
  /** Publishes per rolling 24 hours; 50 by default (the media_publish reference). */
  publishQuota?: number;
}

export interface InstagramFake {
  /** Stands for www.instagram.com, api.instagram.com and graph.instagram.com alike. */
  url: string;
  clientId: string;
  clientSecret: string;
  addUser(user: { username: string; name?: string }): InstagramUser;
  /** The user the consent page approves as from now on (the first user added until then). */
  consentAs(user: InstagramUser): void;
  /** The next consent is refused: back to redirect_uri with `error=access_denied`. */
  refuseNextConsent(): void;
  /** A long-lived token issued now (all three scopes unless told), without the round trip; times as ISO 8601. */
  grant(user: InstagramUser, scopes?: string[]): { accessToken: string; expiresAt: string; issuedAt: string };
  /** The user removes the app: their tokens answer 190/460. */
  revokeApp(user: InstagramUser): void;
  /** Every token issued so far is expired (190/463). */
  expireAccessTokens(): void;
  /** Successful refreshes. */
  refreshes(): number;
  /** The account (every account when none is named) answers 80002 for this many minutes of the fake's clock. */
  throttle(minutes: number, user?: InstagramUser): void;
  /** The next container created ends in ERROR with this subcode (2207026 by default). */
  failNextContainer(subcode?: number): void;
  /** IN_PROGRESS polls for image containers created from now on. */
  imagePolls: number;
  /** IN_PROGRESS polls for video containers created from now on. */
  videoPolls: number;
  /** Publishes per rolling 24 hours. */
  publishQuota: number;
  authorizations: MetaAuthorization[];
  /** Published media, in order. */
  media: InstagramMedia[];
  containers: Map<string, InstagramContainer>;
  requests: MetaRecordedRequest[];
  /** Every media URL the fake fetched, in order. */
  fetches: MetaFetchRecord[];
  /** Queues a fault for the next request of that kind. */
  fail(on: InstagramFaultTarget, fault: MetaFault): void;
  /** Moves the fake's clock forward. */
  advance(ms: number): void;
  close(): Promise<void>;
}

const BASIC = 'instagram_business_basic';
const PUBLISH = 'instagram_business_content_publish';
const COMMENTS = 'instagram_business_manage_comments';
const KNOWN_SCOPES = [BASIC, PUBLISH, COMMENTS, 'instagram_business_manage_messages', 'instagram_business_manage_insights'];
const CONTAINERS_PER_DAY = 400;
const MAX_CAPTION = 2_200;
const MAX_HASHTAGS = 30;
const MAX_MENTIONS = 20;
const MAX_COLLABORATORS = 3;
const IMAGE_RULES = { accept: ['image/jpeg'], maxBytes: 8 * MIB };
const VIDEO_RULES = { accept: ['video/mp4', 'video/quicktime'], maxBytes: 300 * MIB };
const CONTAINER_FIELDS = ['status_code', 'status'];
const MEDIA_FIELDS = [
  'caption',
  'media_type',
  'media_product_type',
  'permalink',
  'timestamp',
  'username',
  'shortcode',
  'comments_count',
  'like_count',
  'media_url',
  'is_comment_enabled',
  'alt_text',
  'owner',
  'children',
];
const USER_FIELDS = ['user_id', 'username', 'name', 'account_type', 'profile_picture_url', 'followers_count', 'follows_count', 'media_count'];

export async function startInstagramFake(options: InstagramFakeOptions = {}): Promise<InstagramFake> {
  const clientId = options.clientId ?? String(900_000_000_000_000 + Math.floor(Math.random() * 99_999_999_999));
  const clientSecret = options.clientSecret ?? randomBytes(16).toString('hex');
  let offsetMs = 0;
  const now = () => (options.now?.() ?? Date.now()) + offsetMs;

  const users = new Map<string, InstagramUser>();
  const media: InstagramMedia[] = [];
  const containers = new Map<string, InstagramContainer>();
  const fetches: MetaFetchRecord[] = [];
  const containerTimes = new Map<string, number[]>();
  const publishTimes = new Map<string, number[]>();
  const plannedFailures: number[] = [];
  const faults = new FaultQueue<InstagramFaultTarget>();
  const recorder = createRecorder();
  const tokens = new MetaTokenStore(now, 'IGAA');
  const usage = createUsageMeter({ now, type: 'instagram' });
  let imagePolls = options.imagePolls ?? 1;
  let videoPolls = options.videoPolls ?? 2;
  let publishQuota = options.publishQuota ?? 50;
  const userIds = numericIds(17_841_400_000_000_001n);
  const appScopedIds = numericIds(26_100_000_000_000_001n);
  const containerIds = numericIds(17_900_000_000_000_001n);
  const mediaIds = numericIds(17_950_000_000_000_001n);
  const commentIds = numericIds(17_980_000_000_000_001n);

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
    exchangeGrant: 'ig_exchange_token',
    refreshGrant: 'ig_refresh_token',
    codeAnswer: (token: MetaToken) => ({
      status: 200,
      body: { data: [{ access_token: token.token, user_id: users.get(token.userId)?.appScopedId ?? token.userId, permissions: token.scopes.join(',') }] },
    }),
  });

  // --- Helpers ---------------------------------------------------------------------------------

  const userOfToken = (token: string | undefined) => {
    const found = tokens.get(token);
    return found === undefined ? undefined : users.get(found.userId);
  };

  /** The caller, or the answer to give instead: token, scopes, throttle; the call is counted. */
  const authed = (ctx: MetaRouteContext, scopes: string[]): InstagramUser | MetaAnswer => {
    const token = tokens.check(ctx.token);
    if (isMetaAnswer(token)) return token;
    const user = users.get(token.userId);
    if (user === undefined) return metaErrors.invalidToken();
    usage.count(user.id);
    if (usage.throttledFor(user.id) > 0) return metaErrors.instagramThrottled();
    const missing = scopes.find((s) => !token.scopes.includes(s));
    if (missing !== undefined) return metaErrors.permission(`Application does not have permission for this action (${missing})`);
    return user;
  };

  const isSelf = (user: InstagramUser, id: string | undefined) => id === 'me' || id === user.id || id === user.appScopedId;

  const usageHeaders = (ctx: MetaRouteContext) => {
    const user = userOfToken(ctx.token);
    return user === undefined ? {} : usage.header(user.id);
  };

  const expire = (c: InstagramContainer) => {
    if ((c.state === 'IN_PROGRESS' || c.state === 'FINISHED') && now() - c.createdAt >= DAY_MS) c.state = 'EXPIRED';
  };

  const poll = (c: InstagramContainer) => {
    expire(c);
    if (c.state !== 'IN_PROGRESS') return;
    if (c.pollsLeft > 0) c.pollsLeft -= 1;
    else c.state = c.failure === null ? 'FINISHED' : 'ERROR';
  };

  const statusText = (c: InstagramContainer) =>
    c.state === 'ERROR'
      ? `Error: Media upload has failed with error code ${c.failure ?? 2207001}`
      : c.state === 'FINISHED'
        ? 'Finished: Media has been uploaded and it is ready to be published.'
        : c.state === 'IN_PROGRESS'
          ? 'In Progress: Media is still being processed.'
          : c.state === 'PUBLISHED'
            ? 'Published: Media has been successfully published.'
            : 'Expired: Media was not published within 24 hours.';

  const notReady = () =>
    metaError({
      message: 'Media ID is not available',
      code: 9007,
      error_subcode: 2207027,
      error_user_title: 'Media not ready for publishing',
      error_user_msg: 'The media is not ready for publishing, please wait for a moment',
    });

  const invalid = (message: string, subcode?: number, title?: string) =>
    metaError({
      message: 'Invalid parameter',
      code: 100,
      ...(subcode === undefined ? {} : { error_subcode: subcode }),
      error_user_title: title ?? 'Invalid parameter',
      error_user_msg: message,
    });

  const captionProblem = (caption: string | undefined): MetaAnswer | null => {
    if (caption === undefined) return null;
    const hashtags = caption.match(/#[\p{L}\p{N}_]+/gu)?.length ?? 0;
    const mentions = caption.match(/@[\p{L}\p{N}_.]+/gu)?.length ?? 0;
    if ([...caption].length <= MAX_CAPTION && hashtags <= MAX_HASHTAGS && mentions <= MAX_MENTIONS) return null;
    return metaError({
      message: 'The caption is too long',
      code: 36004,
      error_subcode: 2207010,
      error_user_title: 'Caption too long',
      error_user_msg: `The caption can have at most ${MAX_CAPTION} characters, ${MAX_HASHTAGS} hashtags and ${MAX_MENTIONS} @ tags (it has ${[...caption].length}, ${hashtags} and ${mentions}).`,
    });
  };

  /** Fetches the media as Meta does; null when it is fine, else the error Instagram gives. */
  const fetchProblem = async (url: string, kind: 'IMAGE' | 'VIDEO'): Promise<MetaAnswer | null> => {
    const result = await fetchMediaLikeMeta(url, kind === 'IMAGE' ? IMAGE_RULES : VIDEO_RULES);
    fetches.push(toFetchRecord(result));
    if (result.ok) return null;
    switch (result.reason) {
      case 'timeout':
        return metaError({
          message: 'Media download has timed out',
          code: -2,
          error_subcode: 2207003,
          error_user_title: 'Timeout downloading media',
          error_user_msg: 'It takes too long to download the media.',
        });
      case 'bad_url':
      case 'unreachable':
      case 'redirect':
      case 'status':
        return metaError({
          message: 'The media could not be fetched from this URI',
          code: 9004,
          error_subcode: 2207052,
          error_user_title: 'Media download has failed.',
          error_user_msg: `The media could not be fetched from this uri: ${url} (${result.detail})`,
        });
      case 'type':
      case 'size':
        if (kind === 'VIDEO')
          return metaError({
            message: 'The video format is not supported',
            code: 352,
            error_subcode: 2207026,
            error_user_title: 'Unsupported video format',
            error_user_msg: `The video format is not supported. Please check spec for supported formats (${result.detail}).`,
          });
        return result.reason === 'type'
          ? metaError({
              message: 'The image format is not supported',
              code: 36001,
              error_subcode: 2207005,
              error_user_title: 'Unsupported format',
              error_user_msg: `The image format is not supported. Supported formats are: JPEG (${result.detail}).`,
            })
          : metaError({
              message: 'The image size is too large',
              code: 36000,
              error_subcode: 2207004,
              error_user_title: 'Image is too large',
              error_user_msg: `The image is too large to download. It should be less than 8 MiB (${result.detail}).`,
            });
    }
  };

  const mediaNode = (m: InstagramMedia): Record<string, unknown> => {
    const user = users.get(m.userId);
    return {
      id: m.id,
      caption: m.caption ?? undefined,
      media_type: m.mediaType,
      media_product_type: m.mediaProductType,
      permalink: m.permalink,
      timestamp: m.timestamp,
      username: user?.username,
      shortcode: m.shortcode,
      comments_count: m.comments.length,
      like_count: 0,
      media_url: m.mediaType === 'CAROUSEL_ALBUM' ? undefined : m.children[0]?.url,
      is_comment_enabled: m.mediaProductType !== 'STORY',
      alt_text: m.mediaType === 'IMAGE' ? (m.altTexts[0] ?? undefined) : undefined,
      owner: { id: m.userId },
      children: m.mediaType === 'CAROUSEL_ALBUM' ? { data: m.children.map((_c, i) => ({ id: `${m.id}${i + 1}` })) } : undefined,
    };
  };

  const userNode = (user: InstagramUser): Record<string, unknown> => ({
    id: user.appScopedId,
    user_id: user.id,
    username: user.username,
    name: user.name,
    account_type: 'Business',
    followers_count: 0,
    follows_count: 0,
    media_count: media.filter((m) => m.userId === user.id && m.mediaProductType !== 'STORY').length,
  });

  const mediaById = (id: string | undefined) => media.find((m) => m.id === id);

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
      return pickFields(userNode(user), USER_FIELDS, parseFields(ctx.query.fields));
    },
  });

  // --- Nodes: a user, a container, a media ---------------------------------------------------------

  metaRoute(app, {
    method: 'GET',
    url: versioned('/:id'),
    target: (ctx) => (containers.has(ctx.params.id ?? '') ? 'status' : [...users.values()].some((u) => isSelf(u, ctx.params.id)) ? 'me' : 'media'),
    recorder,
    faults,
    headers: usageHeaders,
    handle: (ctx) => {
      const user = authed(ctx, [BASIC]);
      if (isMetaAnswer(user)) return user;
      const id = ctx.params.id ?? '';
      const fields = parseFields(ctx.query.fields);
      if (isSelf(user, id)) return pickFields(userNode(user), USER_FIELDS, fields);
      const container = containers.get(id);
      if (container !== undefined && container.userId === user.id) {
        poll(container);
        return pickFields({ id, status_code: container.state, status: statusText(container) }, CONTAINER_FIELDS, fields);
      }
      const found = mediaById(id);
      if (found !== undefined && found.userId === user.id) return pickFields(mediaNode(found), MEDIA_FIELDS, fields);
      return metaErrors.unsupportedGet(id);
    },
  });

  // --- Containers ------------------------------------------------------------------------------

  metaRoute(app, {
    method: 'POST',
    url: versioned('/:id/media'),
    target: 'container',
    recorder,
    faults,
    headers: usageHeaders,
    handle: async (ctx) => {
      const user = authed(ctx, [BASIC, PUBLISH]);
      if (isMetaAnswer(user)) return user;
      if (!isSelf(user, ctx.params.id)) return metaErrors.unsupportedPost(ctx.params.id ?? '');
      const p = ctx.query;
      const times = containerTimes.get(user.id) ?? [];
      if (countSince(times, now() - DAY_MS) >= CONTAINERS_PER_DAY)
        return metaError({
          message: '(#4) Application request limit reached',
          code: 4,
          is_transient: true,
          error_user_title: 'Too many containers',
          error_user_msg: `An account can create ${CONTAINERS_PER_DAY} media containers in a rolling 24-hour period.`,
        });
      if (p.upload_type === 'resumable') return invalid('Resumable uploads are available only for apps that implemented Facebook Login for Business.');
      const isItem = p.is_carousel_item === 'true';
      const type = p.media_type;
      let kind: InstagramContainer['kind'];
      let product: InstagramContainer['mediaProductType'] = 'FEED';
      if (type === undefined || type === 'IMAGE') {
        if (p.image_url === undefined)
          return p.video_url === undefined
            ? metaErrors.missingParameter('image_url')
            : invalid('A video needs media_type REELS, STORIES or (in a carousel) VIDEO.', 2207023);
        kind = 'IMAGE';
      } else if (type === 'VIDEO') {
        if (!isItem) return invalid('The VIDEO media type is only for carousel items; publish single videos as REELS.', 2207023);
        kind = 'VIDEO';
      } else if (type === 'REELS') {
        kind = 'VIDEO';
        product = 'REELS';
      } else if (type === 'STORIES') {
        kind = p.video_url !== undefined ? 'VIDEO' : 'IMAGE';
        product = 'STORY';
        if (p.video_url === undefined && p.image_url === undefined) return metaErrors.missingParameter('image_url');
      } else if (type === 'CAROUSEL') {
        kind = 'CAROUSEL';
      } else {
        return invalid(`The media type ${type} is unknown.`, 2207023, 'Unknown media type');
      }
      if (isItem && (type === 'REELS' || type === 'STORIES' || type === 'CAROUSEL')) return invalid(`A carousel item cannot be ${type}.`, 2207023);
      if (kind === 'VIDEO' && p.video_url === undefined) return metaErrors.missingParameter('video_url');
      const url = kind === 'CAROUSEL' ? null : kind === 'VIDEO' ? p.video_url! : p.image_url!;

      if (!isItem) {
        const problem = captionProblem(p.caption);
        if (problem !== null) return problem;
      }
      if (p.alt_text !== undefined && (kind !== 'IMAGE' || product !== 'FEED'))
        return invalid('alt_text is supported on images only (not reels, stories or carousel containers).');
      if (p.cover_url !== undefined && product !== 'REELS') return invalid('cover_url is supported on reels only.');
      if (p.share_to_feed !== undefined && (product !== 'REELS' || !['true', 'false'].includes(p.share_to_feed)))
        return invalid('share_to_feed must be true or false, on reels only.');
      let thumbOffset: number | null = null;
      if (p.thumb_offset !== undefined) {
        thumbOffset = Number(p.thumb_offset);
        if (kind !== 'VIDEO' || !Number.isInteger(thumbOffset) || thumbOffset < 0)
          return invalid('thumb_offset must be a whole number of milliseconds, on videos only.', 2207057);
      }
      let collaborators: string[] = [];
      if (p.collaborators !== undefined) {
        const parsed = parseIdList(p.collaborators);
        if (parsed === undefined || !p.collaborators.trim().startsWith('[')) return invalid('collaborators must be a JSON array of usernames.');
        if (parsed.length > MAX_COLLABORATORS) return invalid(`A post can have at most ${MAX_COLLABORATORS} collaborators.`);
        if (product === 'STORY' || isItem) return invalid('Collaborators are not supported on stories or carousel items.');
        collaborators = parsed;
      }
      if (p.location_id !== undefined && !/^\d+$/.test(p.location_id)) return invalid('location_id must be a numeric Page id.');

      let children: string[] = [];
      if (kind === 'CAROUSEL') {
        const ids = parseIdList(p.children);
        if (ids === undefined || ids.length < 2 || ids.length > 10)
          return invalid('Carousel validation failed: a carousel needs 2 to 10 items.', 2207028, 'Carousel validation failed');
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
            return invalid(
              `Carousel validation failed: ${childId} is not a usable carousel item container of this account.`,
              2207028,
              'Carousel validation failed',
            );
          if (child.state !== 'FINISHED') return notReady();
        }
        children = ids;
      } else {
        const problem = await fetchProblem(url!, kind);
        if (problem !== null) return problem;
      }

      const polls = kind === 'VIDEO' ? videoPolls : imagePolls;
      const failure = plannedFailures.shift() ?? null;
      const container: InstagramContainer = {
        id: containerIds(),
        userId: user.id,
        kind,
        mediaProductType: product,
        isCarouselItem: isItem,
        url,
        children,
        caption: isItem ? null : (p.caption ?? null),
        altText: p.alt_text ?? null,
        collaborators,
        locationId: p.location_id ?? null,
        shareToFeed: p.share_to_feed === undefined ? null : p.share_to_feed === 'true',
        thumbOffset,
        coverUrl: p.cover_url ?? null,
        state: polls > 0 ? 'IN_PROGRESS' : failure === null ? 'FINISHED' : 'ERROR',
        pollsLeft: polls,
        failure,
        createdAt: now(),
        mediaId: null,
        publishCalls: 0,
      };
      containers.set(container.id, container);
      containerTimes.set(user.id, [...times, now()]);
      return { status: 200, body: { id: container.id } };
    },
  });

  // --- Publishing ------------------------------------------------------------------------------

  metaRoute(app, {
    method: 'POST',
    url: versioned('/:id/media_publish'),
    target: 'publish',
    recorder,
    faults,
    headers: usageHeaders,
    handle: (ctx) => {
      const user = authed(ctx, [BASIC, PUBLISH]);
      if (isMetaAnswer(user)) return user;
      if (!isSelf(user, ctx.params.id)) return metaErrors.unsupportedPost(ctx.params.id ?? '');
      const creationId = ctx.query.creation_id;
      if (creationId === undefined) return metaErrors.missingParameter('creation_id');
      const c = containers.get(creationId);
      if (c === undefined || c.userId !== user.id) return invalid(`The media container ${creationId} does not exist on this account.`);
      c.publishCalls += 1;
      if (c.isCarouselItem) return invalid('A carousel item cannot be published on its own; publish its carousel.');
      expire(c);
      if (c.state === 'PUBLISHED') return metaError({ message: '(#100) This media container has already been published', code: 100 });
      const times = publishTimes.get(user.id) ?? [];
      if (countSince(times, now() - DAY_MS) >= publishQuota)
        return metaError({
          message: 'Application request limit reached',
          code: 9,
          error_subcode: 2207042,
          is_transient: false,
          error_user_title: 'The maximum number of posts that can be published has been reached.',
          error_user_msg: `You have reached the maximum of ${publishQuota} posts per day allowed for your account.`,
        });
      if (c.state === 'EXPIRED')
        return metaError({
          message: 'The media has expired',
          code: -2,
          error_subcode: 2207020,
          error_user_title: 'Media expired',
          error_user_msg: 'The media you are trying to publish has expired. Please try again with a new media container.',
        });
      if (c.state !== 'FINISHED') return notReady();

      const items = c.kind === 'CAROUSEL' ? c.children.map((id) => containers.get(id)!) : [c];
      const shortcode = randomBytes(8).toString('base64url').slice(0, 11);
      const id = mediaIds();
      const permalink =
        c.mediaProductType === 'STORY'
          ? `https://www.instagram.com/stories/${user.username}/${id}/`
          : `https://www.instagram.com/${c.mediaProductType === 'REELS' ? 'reel' : 'p'}/${shortcode}/`;
      const entry: InstagramMedia = {
        id,
        userId: user.id,
        containerId: c.id,
        mediaProductType: c.mediaProductType,
        mediaType: c.kind === 'CAROUSEL' ? 'CAROUSEL_ALBUM' : c.kind,
        caption: c.caption,
        children: items.map((item) => ({ mediaType: item.kind === 'VIDEO' ? 'VIDEO' : 'IMAGE', url: item.url ?? '' })),
        collaborators: c.collaborators,
        locationId: c.locationId,
        shareToFeed: c.shareToFeed,
        thumbOffset: c.thumbOffset,
        altTexts: items.map((item) => item.altText),
        timestamp: metaTimestamp(now()),
        permalink,
        shortcode,
        comments: [],
        publishedAt: now(),
      };
      media.push(entry);
      c.state = 'PUBLISHED';
      c.mediaId = id;
      for (const child of c.children) {
        const item = containers.get(child);
        if (item !== undefined) item.state = 'PUBLISHED';
      }
      publishTimes.set(user.id, [...times, now()]);
      return { status: 200, body: { id } };
    },
  });

  metaRoute(app, {
    method: 'GET',
    url: versioned('/:id/content_publishing_limit'),
    target: 'limit',
    recorder,
    faults,
    headers: usageHeaders,
    handle: (ctx) => {
      const user = authed(ctx, [BASIC]);
      if (isMetaAnswer(user)) return user;
      if (!isSelf(user, ctx.params.id)) return metaErrors.unsupportedGet(ctx.params.id ?? '');
      const fields = parseFields(ctx.query.fields);
      const unknown = fields.find((f) => f !== 'quota_usage' && f !== 'config');
      if (unknown !== undefined) return metaErrors.nonexistingField(unknown);
      if (ctx.query.since !== undefined && !/^\d+$/.test(ctx.query.since)) return metaErrors.invalidParameter('since must be a Unix timestamp');
      const since = ctx.query.since === undefined ? now() - DAY_MS : Math.max(now() - DAY_MS, Number(ctx.query.since) * 1000);
      const entry: Record<string, unknown> = {};
      if (fields.length === 0 || fields.includes('quota_usage')) entry.quota_usage = countSince(publishTimes.get(user.id) ?? [], since);
      if (fields.includes('config')) entry.config = { quota_total: publishQuota, quota_duration: 86_400 };
      return { status: 200, body: { data: [entry] } };
    },
  });

  // --- Lists -----------------------------------------------------------------------------------

  const list = (ctx: MetaRouteContext, stories: boolean): MetaAnswer => {
    const user = authed(ctx, [BASIC]);
    if (isMetaAnswer(user)) return user;
    if (!isSelf(user, ctx.params.id)) return metaErrors.unsupportedGet(ctx.params.id ?? '');
    const fields = parseFields(ctx.query.fields);
    const unknown = fields.find((f) => !MEDIA_FIELDS.includes(f.replace(/\{.*$/, '')) && f !== 'id');
    if (unknown !== undefined) return metaErrors.nonexistingField(unknown);
    const limit = ctx.query.limit === undefined ? 25 : Number(ctx.query.limit);
    if (!Number.isInteger(limit) || limit < 1) return metaErrors.invalidParameter('limit must be a positive integer');
    const since = ctx.query.since === undefined ? -Infinity : Number(ctx.query.since) * 1000;
    const until = ctx.query.until === undefined ? Infinity : Number(ctx.query.until) * 1000;
    const all = media
      .filter((m) => m.userId === user.id && (m.mediaProductType === 'STORY') === stories)
      .filter((m) => !stories || now() - m.publishedAt < DAY_MS)
      .filter((m) => m.publishedAt >= since && m.publishedAt <= until)
      .reverse();
    let from = 0;
    const cursor = (id: string) => Buffer.from(id).toString('base64url');
    if (ctx.query.after !== undefined) {
      const afterId = Buffer.from(ctx.query.after, 'base64url').toString();
      const index = all.findIndex((m) => m.id === afterId);
      if (index === -1) return metaErrors.invalidParameter('The after cursor is not valid');
      from = index + 1;
    }
    const page = all.slice(from, from + Math.min(limit, 100));
    const data = page.map((m) => (pickFields(mediaNode(m), MEDIA_FIELDS, fields).body ?? {}) as Record<string, unknown>);
    if (page.length === 0) return { status: 200, body: { data } };
    const more = from + page.length < all.length;
    const nextUrl = new URL(`http://127.0.0.1${ctx.req.url}`);
    nextUrl.searchParams.delete('access_token');
    nextUrl.searchParams.set('after', cursor(page[page.length - 1]!.id));
    return {
      status: 200,
      body: {
        data,
        paging: {
          cursors: { before: cursor(page[0]!.id), after: cursor(page[page.length - 1]!.id) },
          ...(more ? { next: `${url}${nextUrl.pathname}${nextUrl.search}` } : {}),
        },
      },
    };
  };

  metaRoute(app, { method: 'GET', url: versioned('/:id/media'), target: 'list', recorder, faults, headers: usageHeaders, handle: (ctx) => list(ctx, false) });
  metaRoute(app, { method: 'GET', url: versioned('/:id/stories'), target: 'list', recorder, faults, headers: usageHeaders, handle: (ctx) => list(ctx, true) });

  // --- Comments --------------------------------------------------------------------------------

  metaRoute(app, {
    method: 'POST',
    url: versioned('/:id/comments'),
    target: 'comment',
    recorder,
    faults,
    headers: usageHeaders,
    handle: (ctx) => {
      const user = authed(ctx, [BASIC, COMMENTS]);
      if (isMetaAnswer(user)) return user;
      const found = mediaById(ctx.params.id);
      if (found === undefined || found.userId !== user.id) return metaErrors.unsupportedPost(ctx.params.id ?? '');
      const message = ctx.query.message;
      if (message === undefined || message === '') return metaErrors.missingParameter('message');
      if (found.mediaProductType === 'STORY') return invalid('Comments are not supported on stories.');
      if ([...message].length > MAX_CAPTION) return invalid(`A comment can have at most ${MAX_CAPTION} characters.`);
      const comment = { id: commentIds(), text: message };
      found.comments.push(comment);
      return { status: 200, body: { id: comment.id } };
    },
  });

  const url = await listenLocal(app);

  const userOf = (user: InstagramUser) => {
    const found = users.get(user.id);
    if (found === undefined) throw new Error(`no user ${user.id}`);
    return found;
  };

  return {
    url,
    clientId,
    clientSecret,
    addUser({ username, name }) {
      const user = { id: userIds(), appScopedId: appScopedIds(), username, name: name ?? username };
      users.set(user.id, user);
      return { ...user };
    },
    consentAs: (user) => login.consentAs(userOf(user).id),
    refuseNextConsent: () => login.refuseNextConsent(),
    grant(user, scopes = [BASIC, PUBLISH, COMMENTS]) {
      const token = login.grant(userOf(user).id, scopes);
      return { accessToken: token.token, expiresAt: new Date(token.expiresAt).toISOString(), issuedAt: new Date(token.issuedAt).toISOString() };
    },
    revokeApp: (user) => tokens.killUser(userOf(user).id),
    expireAccessTokens: () => tokens.expireAll(),
    refreshes: () => login.refreshes(),
    throttle(minutes, user) {
      for (const u of user === undefined ? [...users.values()] : [userOf(user)]) usage.throttle(u.id, minutes);
    },
    failNextContainer(subcode = 2207026) {
      plannedFailures.push(subcode);
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
    get publishQuota() {
      return publishQuota;
    },
    set publishQuota(quota: number) {
      publishQuota = quota;
    },
    authorizations: login.authorizations,
    media,
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
