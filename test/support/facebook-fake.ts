import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  FaultQueue,
  LONG_LIVED_TTL_S,
  MIB,
  MetaMultipart,
  MetaTokenStore,
  createMetaApp,
  createRecorder,
  createUsageMeter,
  faultAnswer,
  fetchMediaLikeMeta,
  isGraphVersion,
  isMetaAnswer,
  isObject,
  listenLocal,
  metaError,
  metaErrors,
  metaTimestamp,
  numericIds,
  readAccessToken,
  readBody,
  readParams,
  toFetchRecord,
  versioned,
  type MetaAnswer,
  type MetaFault,
  type MetaFetchRecord,
  type MetaRecordedRequest,
  type MetaRouteContext,
  type MetaToken,
} from './meta-fake-kit.js';

/**
 * An in-process Facebook Graph API (Facebook Login and the Pages API), written from Meta's documentation, for the
 * calls Herald makes. `url` stands for https://www.facebook.com (the Login dialog), https://graph.facebook.com and
 * https://graph-video.facebook.com alike (same paths, any `/v<d>.<d>/` version prefix).
 * - developers.facebook.com/documentation/facebook-login/guides/advanced/manual-flow: GET /{v}/dialog/oauth
 *   (client_id, redirect_uri, state, response_type=code, scope comma separated) back to redirect_uri with `code` and
 *   `state`; the person's refusal as `error=access_denied&error_code=200&error_description=Permissions+error&
 *   error_reason=user_denied` (the dialog's cancel URL, as seen on pastebin.com/jywPJecY, with the `#_=_` Facebook adds
 *   to its redirects); GET /{v}/oauth/access_token (client_id, redirect_uri, client_secret, code) → `{access_token,
 *   token_type: "bearer", expires_in}`, the redirect_uri identical to the dialog's, the code used once;
 * - developers.facebook.com/docs/facebook-login/guides/access-tokens/get-long-lived: grant_type=fb_exchange_token →
 *   `expires_in` 5183944 ("about 60 days"); Page tokens got with a long-lived user token have no expiry, with a
 *   short-lived one they end with it;
 * - developers.facebook.com/docs/graph-api/reference/user/accounts and /docs/pages-api/getting-started: GET
 *   /me/accounts `{data: [{access_token, category, category_list, name, id, tasks}], paging: {cursors}}`, only the
 *   Pages the person chose in the dialog; tasks ANALYZE, ADVERTISE, MODERATE, CREATE_CONTENT, MANAGE;
 *   /docs/graph-api/reference/user/permissions: `{data: [{permission, status: granted|declined}]}`;
 * - developers.facebook.com/docs/pages-api/posts (pages_manage_posts, pages_read_engagement, CREATE_CONTENT; photos
 *   unpublished with `published=false`, then POST /{page}/feed with `attached_media[i]={"media_fbid": id}`; a
 *   published photo answers `{id, post_id}`) and /docs/graph-api/reference/page/photos (`source` multipart or `url`);
 * - developers.facebook.com/docs/graph-api/video-uploads (graph-video.facebook.com, `upload_phase` start → {video_id,
 *   upload_session_id, start_offset, end_offset}, transfer with `video_file_chunk` until start_offset equals
 *   end_offset, finish → {success: true}; resumable up to 10 GB; one-request `source` or `file_url` → {id}) and
 *   /docs/video-api/guides/publishing (a Page token of someone with CREATE_CONTENT; pages_show_list,
 *   pages_read_engagement, pages_manage_posts); /documentation/video-api/reference/error-codes (1363022 under 1 KB,
 *   1363023 too large, 1363019, and 1363037 for a wrong start offset with `error_data: {start_offset, end_offset}`);
 *   /docs/graph-api/reference/video-status (video_status, uploading_phase, processing_phase, publishing_phase
 *   {status, publish_status, publish_time}); a Video's `permalink_url` is relative (`/{page}/videos/{id}/`, as peers'
 *   tests record it);
 * - developers.facebook.com/docs/graph-api/reference/page/published_posts (GET with a Page token; `since`, `until`,
 *   `limit`, cursor paging); /docs/graph-api/reference/object/comments (POST /{post}/comments `message` → `{id}`,
 *   pages_manage_engagement and the MODERATE task);
 * - developers.facebook.com/docs/graph-api/overview/rate-limiting: X-App-Usage on every answer, X-Business-Use-Case-
 *   Usage `{"<page-id>": [{type: "pages", call_count, total_cputime, total_time, estimated_time_to_regain_access}]}`
 *   on Page-token calls, 80001 when the Page is throttled; /docs/graph-api/guides/error-handling (the error body,
 *   190/460 password changed, 190/463 expired, 506 duplicate post).
 * Seen in the wild, not documented (so the fake's word only): 100/36009 "This authorization code has been used."
 * (akeeba/sociallogin#102), 100/36008 for a different redirect_uri and 100/36007 for an expired code (peers' tests);
 * "Error validating client secret." (code 1) and "Error validating application. Invalid application ID." (101);
 * 506/1455006 "Duplicate status message" with error_user_title "Duplicate Post"; (#200) "If posting to a group, ... If
 * posting to a page, requires both pages_read_engagement and pages_manage_posts as an admin with sufficient
 * administrative permission" (HTTP 403) for a write without a Page token of that Page or without those permissions;
 * (#210) "A page access token is required to request this resource." for published_posts with a user token;
 * 324/1366046 "Your photos couldn't be uploaded. Photos should be less than 4 MB and saved as JPG, PNG, GIF, TIFF, HEIF
 * or WebP files." (error_user_title "Can't Read Files"); "(#100) Missing message or attachment"; "The video file you
 * selected is in a format that we don't support."; the refused dialog's "URL Blocked" and "Invalid Scopes" pages.
 * Choices of the fake (the docs are silent): 4 MB is 4 MiB; BMP is accepted (Herald's table) beside Meta's list; code
 * 6000 with the Video API subcodes; 1 MiB chunks, each transfer exactly `end_offset - start_offset` bytes; a second
 * finish answers `{success: true}` again and changes nothing; processing moves only when the video is polled
 * (`videoPolls` processing answers, then ready with its post, or error with `processing_phase.errors[{code: 1363008,
 * message}]`, code the fake's); `upload_phase=cancel` drops an unfinished upload; the post of a video or photo gets its own
 * id; the 506 check compares a /feed message with the Page's latest post only (photos and videos are not checked);
 * text over 63,206 UTF-16 units is refused; a short-lived user token lasts 5,400 s; /me/accounts without
 * pages_show_list answers an empty list; /me/accounts mints a Page token once per (user token lineage, Page) and gives
 * the same one again; the latest consent replaces the person's earlier one (Pages and permissions) but tokens keep the
 * permissions they were issued with; `feed` is read like `published_posts` (the Page's own posts); the dialog takes
 * no planned faults and carries no usage header; Meta's HTTP status for 190 and 210 is taken as 400.
 * Faults a test plans are taken by the next matching request, in order. No timers: the clock is read on demand.
 */

export interface FacebookUser {
  /** Numeric, as a string. */
  id: string;
  name: string;
}

export interface FacebookPage {
  id: string;
  name: string;
  /** The person who manages it (the fake has one per Page). */
  ownerId: string;
  /** What the owner may do on it: ANALYZE, ADVERTISE, MODERATE, CREATE_CONTENT, MANAGE, ... */
  tasks: string[];
  category: string;
}

export interface FacebookComment {
  id: string;
  message: string;
  /** By the fake's clock (`2026-11-27T13:00:00+0000`). */
  createdTime: string;
}

export interface FacebookPost {
  /** `<page id>_<post id>`. */
  id: string;
  pageId: string;
  /** The message, photo caption or video description ('' when none). */
  message: string;
  link: string | null;
  photos: { id: string; bytes: Buffer; mime: string }[];
  videoId: string | null;
  /** By the fake's clock, to the second (`2026-11-27T13:00:00+0000`). */
  createdTime: string;
  permalinkUrl: string;
  comments: FacebookComment[];
}

export interface FacebookPhoto {
  id: string;
  pageId: string;
  bytes: Buffer;
  mime: string;
  published: boolean;
  caption: string | null;
  /** The post it made (published) or is attached to (unpublished, after /feed). */
  postId: string | null;
  createdTime: string;
}

export interface FacebookVideo {
  id: string;
  pageId: string;
  /** null for a one-request upload (`source` or `file_url`). */
  uploadSessionId: string | null;
  fileSize: number;
  /** Received so far. */
  bytes: Buffer;
  state: 'uploading' | 'processing' | 'ready' | 'error';
  /** Status polls left to answer processing. */
  pollsLeft: number;
  /** The processing error this video is to end with, when a test planned one. */
  failure: string | null;
  description: string;
  title: string | null;
  postId: string | null;
  createdTime: string;
}

export interface FacebookAuthorization {
  /** The dialog's query, as sent. */
  query: Record<string, string>;
  outcome: 'approved' | 'refused' | 'invalid';
  /** Why the dialog refused to go on (`invalid`). */
  reason: string | null;
  userId: string | null;
  /** The Pages the person chose (`approved`). */
  pageIds: string[];
  granted: string[];
  declined: string[];
  /** By the fake's clock, in ms. */
  at: number;
}

/** token: /oauth/access_token (both grants); me: /me and /me/permissions; accounts: /me/accounts and GET /{page-id};
 * photos: POST /{page}/photos and GET /{photo-id}; feed: POST /{page}/feed; videos: POST /{page}/videos (every phase);
 * status: GET /{video-id}; posts: GET /{page}/published_posts, GET /{page}/feed and GET /{post-id}; comment: POST
 * /{id}/comments and GET /{comment-id}. */
export type FacebookFaultTarget = 'token' | 'me' | 'accounts' | 'photos' | 'feed' | 'videos' | 'status' | 'posts' | 'comment';

export type FacebookFault = MetaFault;

export interface FacebookFakeOptions {
  /** The app id (numeric); random by default. */
  clientId?: string;
  clientSecret?: string;
  /** The fake's clock in ms (codes, tokens, created_time, usage windows); Date.now by default. */
  now?: () => number;
  /** Status polls that answer processing before a video's processing ends; 2 by default. */
  videoPolls?: number;
  /** The app's "Valid OAuth Redirect URIs": when given, the dialog refuses any other (exact match). */
  redirectUris?: string[];
}

export interface ConsentOptions {
  /** Permissions the person turns off in the dialog (they show as `declined`). */
  decline?: string[];
}

export interface FacebookFake {
  /** Stands for https://www.facebook.com, https://graph.facebook.com and https://graph-video.facebook.com. */
  url: string;
  clientId: string;
  clientSecret: string;
  addUser(user?: { name?: string }): FacebookUser;
  /** A Page the user manages, with all tasks unless told. */
  addPage(user: FacebookUser, page: { name: string; tasks?: string[]; category?: string }): { id: string; name: string };
  /** Who answers the dialog from now on (the first user added until then), which of their Pages they tick (all of
   * theirs, at the time of each consent, by default) and which permissions they turn off. */
  consentAs(user: FacebookUser, pageIds?: string[], options?: ConsentOptions): void;
  /** The next dialog is cancelled: back to redirect_uri with `error=access_denied`. */
  refuseNextConsent(): void;
  /** A long-lived user token as a completed consent (all of Herald's permissions but the declined ones, the Pages
   * given or all the user's) and the long-lived exchange would give it. */
  grant(user: FacebookUser, pageIds?: string[], options?: ConsentOptions): string;
  /** A Page token (no expiry, all of Herald's permissions) for the Page's owner, without the round trip. */
  pageToken(page: { id: string }): string;
  /** The person changes their password: their user and Page tokens answer 190/460 from now on. */
  changePassword(user: FacebookUser): void;
  /** Page-token calls for this Page answer 80001 for this many minutes (by the fake's clock). */
  throttle(pageId: string, minutes: number): void;
  authorizations: FacebookAuthorization[];
  /** Posts in creation order (feed posts, published photos, videos once processed). */
  posts: FacebookPost[];
  photos: Map<string, FacebookPhoto>;
  videos: Map<string, FacebookVideo>;
  pages: Map<string, FacebookPage>;
  /** POST /{page}/feed requests received, by `message` (faults and refusals included). */
  feedCalls: Map<string, number>;
  /** Media the fake fetched (`url` photos, `file_url` videos), in order. */
  fetches: MetaFetchRecord[];
  requests: MetaRecordedRequest[];
  /** Queues a fault for the next request of that kind. */
  fail(target: FacebookFaultTarget, fault: FacebookFault): void;
  /** Status polls answered processing for videos finished from now on. */
  videoPolls: number;
  /** The next video finished ends its processing in error with this message. */
  failNextVideo(message?: string): void;
  /** Moves the fake's clock forward. */
  advance(ms: number): void;
  close(): Promise<void>;
}

/** The permissions Herald asks for. */
export const FACEBOOK_SCOPES = [
  'pages_show_list',
  'pages_manage_posts',
  'pages_read_engagement',
  'pages_read_user_engagement',
  'pages_manage_engagement',
  'publish_video',
];
/** Permissions the dialog knows (others are "Invalid Scopes"): Facebook Login's permissions reference, in part. */
const KNOWN_SCOPES = new Set([
  ...FACEBOOK_SCOPES,
  'public_profile',
  'email',
  'pages_manage_metadata',
  'pages_manage_ads',
  'pages_read_user_content',
  'pages_messaging',
  'read_insights',
  'business_management',
  'instagram_basic',
  'instagram_content_publish',
  'instagram_manage_comments',
  'instagram_manage_insights',
  'ads_management',
  'ads_read',
]);
const ALL_TASKS = ['ANALYZE', 'ADVERTISE', 'MODERATE', 'CREATE_CONTENT', 'MANAGE'];
const CODE_TTL_MS = 10 * 60_000;
const SHORT_TTL_S = 5_400;
const MAX_TEXT = 63_206;
const MAX_PHOTO_BYTES = 4 * MIB;
const CHUNK_BYTES = MIB;
const MIN_VIDEO_BYTES = 1024;
const MAX_VIDEO_BYTES = 10 * 1024 * MIB;
const MAX_FETCHED_VIDEO = 256 * MIB;
const PHOTO_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/bmp', 'image/tiff', 'image/webp'];
const VIDEO_TYPES = ['video/mp4', 'video/quicktime', 'video/x-m4v', 'video/webm', 'application/octet-stream'];

const PAGE_POST_REFUSED =
  'If posting to a group, requires app being installed in the group, and either publish_to_groups permission with user token, or both pages_read_engagement and pages_manage_posts permission with page token; If posting to a page, requires both pages_read_engagement and pages_manage_posts as an admin with sufficient administrative permission';
const PHOTO_RULES = "Your photos couldn't be uploaded. Photos should be less than 4 MB and saved as JPG, PNG, GIF, TIFF, HEIF or WebP files.";

const fbErrors = {
  postRefused: () => metaErrors.permissionsError(PAGE_POST_REFUSED),
  pageTokenRequired: () => metaError({ message: '(#210) A page access token is required to request this resource.', code: 210 }),
  photoUnreadable: () =>
    metaError({ message: PHOTO_RULES, code: 324, error_subcode: 1366046, error_user_title: "Can't Read Files", error_user_msg: PHOTO_RULES }),
  photoMissing: () => metaError({ message: '(#324) Requires upload file', code: 324 }),
  photoNotFetched: () => metaError({ message: '(#324) Missing or invalid image file', code: 324 }),
  duplicate: () =>
    metaError({
      message: 'Duplicate status message',
      code: 506,
      error_subcode: 1455006,
      error_user_title: 'Duplicate Post',
      error_user_msg: 'This status update is identical to the last one you posted. Try posting something different, or delete your previous update.',
    }),
  tooLong: (name: string, length: number) => metaErrors.invalidParameter(`Param ${name} must be at most ${MAX_TEXT} characters long (it has ${length}).`),
  video: (subcode: number, message: string, errorData?: Record<string, string>): MetaAnswer => {
    const answer = metaError({ message, code: 6000, error_subcode: subcode, error_user_title: 'Video Upload Problem', error_user_msg: message });
    if (errorData !== undefined && isObject(answer.body) && isObject(answer.body.error)) answer.body.error.error_data = errorData;
    return answer;
  },
  code: (subcode: number, message: string) => metaError({ message, code: 100, error_subcode: subcode }),
};

interface Grant {
  pageIds: string[];
  requested: string[];
  granted: string[];
  declined: string[];
}

interface Code {
  userId: string;
  redirectUri: string;
  issuedAt: number;
  used: boolean;
  granted: string[];
}

interface ConsentChoice {
  userId: string;
  pageIds: string[] | undefined;
  decline: string[];
}

type Target = FacebookFaultTarget;
type Handler = (ctx: MetaRouteContext) => MetaAnswer | Promise<MetaAnswer>;

export async function startFacebookFake(options: FacebookFakeOptions = {}): Promise<FacebookFake> {
  const clientId = options.clientId ?? String(100_000_000_000_000n + BigInt(randomBytes(6).readUIntBE(0, 6) % 900_000_000_000_000));
  const clientSecret = options.clientSecret ?? randomBytes(16).toString('hex');
  let offsetMs = 0;
  const now = () => (options.now?.() ?? Date.now()) + offsetMs;

  const users = new Map<string, FacebookUser>();
  const pages = new Map<string, FacebookPage>();
  const grants = new Map<string, Grant>();
  const codes = new Map<string, Code>();
  const posts: FacebookPost[] = [];
  const postsById = new Map<string, FacebookPost>();
  const postTimes = new Map<string, number>();
  const photos = new Map<string, FacebookPhoto>();
  const videos = new Map<string, FacebookVideo>();
  const sessions = new Map<string, string>();
  const comments = new Map<string, { postId: string; comment: FacebookComment }>();
  const authorizations: FacebookAuthorization[] = [];
  const feedCalls = new Map<string, number>();
  const fetches: MetaFetchRecord[] = [];
  const plannedVideoFailures: string[] = [];
  const tokens = new MetaTokenStore(now, 'EAA');
  /** Page token → Page id. */
  const pageTokenPage = new Map<string, string>();
  /** `${user token lineage}:${page id}` → Page token, so /me/accounts gives the same token again. */
  const pageTokenFor = new Map<string, string>();
  /** User token → the token it was exchanged from (the lineage root is the code's token). */
  const lineage = new Map<string, string>();
  const faults = new FaultQueue<Target>();
  const recorder = createRecorder();
  const meter = createUsageMeter({ now, type: 'pages' });
  let consent: ConsentChoice | null = null;
  let refuseNext = false;
  let videoPolls = options.videoPolls ?? 2;
  const userId = numericIds(100_089_000_000_001n);
  const pageId = numericIds(108_000_000_000_001n);
  const objectId = numericIds(122_100_000_000_001n);
  const sessionId = numericIds(880_000_000_000_001n);

  const app = await createMetaApp({ bodyLimit: 64 * MIB });

  // --- Plumbing ----------------------------------------------------------------------------------

  const pageOf = (token: string | undefined) => (token === undefined ? undefined : pageTokenPage.get(token));
  const origin = (req: FastifyRequest) => `${req.protocol}://${req.headers.host ?? '127.0.0.1'}`;

  /**
   * Every Graph route: the request recorded, the target's planned fault taken (the target may depend on the
   * request, e.g. which kind of object an id is), a throttled Page answered 80001, then the handler; the usage
   * headers on whatever answer goes out; `commitThenDrop` does the work, then cuts the connection.
   */
  const graph = (
    method: 'GET' | 'POST',
    path: string,
    target: Target | ((ctx: MetaRouteContext) => Target | undefined),
    handle: Handler,
    before?: (ctx: MetaRouteContext) => void,
  ) => {
    app.route({
      method,
      url: versioned(path),
      handler: async (req: FastifyRequest, reply: FastifyReply) => {
        const body = await readBody(req);
        recorder.record(req, body);
        const params = (req.params ?? {}) as Record<string, string>;
        const query = readParams(req, body);
        const ctx: MetaRouteContext = { req, params, query, body, token: readAccessToken(req, query) };
        const page = pageOf(ctx.token);
        meter.count(page ?? 'app');
        let answer: MetaAnswer;
        let drop = false;
        if (!isGraphVersion(params.version)) {
          answer = metaErrors.unknownPath(req.url.split('?')[0] ?? req.url);
        } else {
          before?.(ctx);
          const which = typeof target === 'function' ? target(ctx) : target;
          const fault = which === undefined ? undefined : faults.take(which);
          if (fault?.kind === 'answer') {
            answer = faultAnswer(fault);
          } else {
            const pageToken = page === undefined ? undefined : tokens.check(ctx.token);
            const throttled = page !== undefined && !isMetaAnswer(pageToken) && meter.throttledFor(page) > 0;
            answer = throttled ? metaErrors.pageThrottled() : await handle(ctx);
            drop = fault?.kind === 'commitThenDrop';
          }
        }
        if (drop) {
          req.raw.socket.destroy();
          return reply;
        }
        const headers = { ...meter.appHeader(), ...(page === undefined ? {} : meter.header(page)), ...answer.headers };
        return reply
          .code(answer.status)
          .headers(headers)
          .send(answer.body ?? '');
      },
    });
  };

  /** The live token, or Meta's answer (2500/190/460/463). */
  const live = (ctx: MetaRouteContext): MetaToken | MetaAnswer => tokens.check(ctx.token);

  /** For writes to a Page: a live Page token of that Page, with the permissions and the task. */
  const pageWriter = (ctx: MetaRouteContext, id: string, scopes: string[], task: string): { token: MetaToken; page: FacebookPage } | MetaAnswer => {
    const token = live(ctx);
    if (isMetaAnswer(token)) return token;
    const page = pages.get(id);
    if (page === undefined) return metaErrors.unsupportedPost(id);
    if (pageOf(ctx.token) !== id) return fbErrors.postRefused();
    if (!scopes.every((s) => token.scopes.includes(s))) return fbErrors.postRefused();
    if (!page.tasks.includes(task) && !page.tasks.includes('MANAGE')) return fbErrors.postRefused();
    return { token, page };
  };

  /** Whether the token may read an object of this Page: a Page token of it, or a user token of its owner. */
  const canSee = (token: MetaToken, ctx: MetaRouteContext, ofPage: string) => {
    const page = pageOf(ctx.token);
    if (page !== undefined) return page === ofPage;
    return pages.get(ofPage)?.ownerId === token.userId;
  };

  /** `fields`, or the defaults; the first one the node does not have as Meta's error. */
  const fieldsOf = (ctx: MetaRouteContext, known: string[], defaults: string[]): string[] | MetaAnswer => {
    const asked =
      ctx.query.fields === undefined
        ? defaults
        : ctx.query.fields
            .split(',')
            .map((f) => f.trim().replace(/\{.*$/, ''))
            .filter((f) => f !== '');
    const unknown = asked.find((f) => !known.includes(f));
    return unknown === undefined ? asked : metaErrors.nonexistingField(unknown);
  };
  const pick = (fields: string[], all: Record<string, unknown>) => Object.fromEntries(fields.filter((f) => all[f] !== undefined).map((f) => [f, all[f]]));

  const flag = (value: string | undefined, fallback: boolean) => {
    if (value === undefined || value === '') return fallback;
    return !['false', '0', 'no'].includes(value.toLowerCase());
  };

  const newPost = (page: FacebookPage, fields: Pick<FacebookPost, 'message' | 'link' | 'photos' | 'videoId'>): FacebookPost => {
    const part = objectId();
    const id = `${page.id}_${part}`;
    const t = now();
    const post: FacebookPost = {
      id,
      pageId: page.id,
      createdTime: metaTimestamp(t),
      permalinkUrl: `https://www.facebook.com/${page.id}/posts/${part}`,
      comments: [],
      ...fields,
    };
    posts.push(post);
    postsById.set(id, post);
    postTimes.set(id, Math.floor(t / 1000) * 1000);
    return post;
  };

  const postJson = (post: FacebookPost, fields: string[]) => {
    const page = pages.get(post.pageId);
    return pick(fields, {
      id: post.id,
      message: post.message === '' ? undefined : post.message,
      created_time: post.createdTime,
      updated_time: post.createdTime,
      permalink_url: post.permalinkUrl,
      is_published: true,
      from: page === undefined ? undefined : { name: page.name, id: page.id },
      status_type:
        post.videoId !== null ? 'added_video' : post.photos.length > 0 ? 'added_photos' : post.link !== null ? 'shared_story' : 'mobile_status_update',
    });
  };
  const POST_FIELDS = ['id', 'message', 'created_time', 'updated_time', 'permalink_url', 'is_published', 'from', 'status_type'];

  // --- Facebook Login ------------------------------------------------------------------------------

  const pageIdsFor = (choice: { userId: string; pageIds: string[] | undefined }) =>
    choice.pageIds ?? [...pages.values()].filter((p) => p.ownerId === choice.userId).map((p) => p.id);

  const setGrant = (user: string, requested: string[], decline: string[], pageIds: string[]): Grant => {
    const granted = requested.filter((s) => !decline.includes(s));
    const grant: Grant = { pageIds, requested, granted, declined: requested.filter((s) => decline.includes(s)) };
    grants.set(user, grant);
    return grant;
  };

  app.get('/:version/dialog/oauth', async (req, reply) => {
    recorder.record(req, null);
    const query: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.query as Record<string, unknown>)) query[name] = Array.isArray(value) ? String(value[0]) : String(value);
    const version = (req.params as { version?: string }).version;
    const scope = (query.scope ?? '')
      .split(/[,\s]+/)
      .map((s) => s.trim())
      .filter((s) => s !== '');
    const invalidScopes = scope.filter((s) => !KNOWN_SCOPES.has(s));
    const invalid = (reason: string, page: string) => {
      authorizations.push({ query, outcome: 'invalid', reason, userId: null, pageIds: [], granted: [], declined: [], at: now() });
      return reply.code(400).type('text/html').send(`<!DOCTYPE html><title>Facebook</title><p>${page}</p><!-- ${reason} -->`);
    };
    if (!isGraphVersion(version)) return invalid('unknown Graph version', 'Sorry, this content isn&#039;t available right now');
    if (query.client_id !== clientId) return invalid('unknown client_id', 'Invalid App ID: The provided app ID does not look like a valid app ID.');
    let redirect: URL;
    try {
      redirect = new URL(query.redirect_uri ?? '');
      if (redirect.protocol !== 'http:' && redirect.protocol !== 'https:') throw new Error('scheme');
    } catch {
      return invalid(
        'redirect_uri missing or not an http(s) URL',
        'Can&#039;t Load URL: The domain of this URL isn&#039;t included in the app&#039;s domains.',
      );
    }
    if (options.redirectUris !== undefined && !options.redirectUris.includes(query.redirect_uri ?? ''))
      return invalid(
        'redirect_uri is not one of the app’s Valid OAuth Redirect URIs',
        'URL Blocked: This redirect failed because the redirect URI is not whitelisted in the app’s Client OAuth Settings.',
      );
    if (query.response_type !== undefined && query.response_type !== 'code')
      return invalid(`response_type ${query.response_type} is not implemented by the fake (only code)`, 'Sorry, something went wrong.');
    if (invalidScopes.length > 0) return invalid(`invalid scopes ${invalidScopes.join(',')}`, `Invalid Scopes: ${invalidScopes.join(', ')}.`);
    const back = (values: Record<string, string>) => {
      for (const [name, value] of Object.entries(values)) redirect.searchParams.set(name, value);
      redirect.hash = '_=_';
      return reply.redirect(redirect.href, 302);
    };
    if (refuseNext) {
      refuseNext = false;
      authorizations.push({ query, outcome: 'refused', reason: null, userId: null, pageIds: [], granted: [], declined: [], at: now() });
      return back({
        error: 'access_denied',
        error_code: '200',
        error_description: 'Permissions error',
        error_reason: 'user_denied',
        ...(query.state === undefined ? {} : { state: query.state }),
      });
    }
    const choice: ConsentChoice | undefined =
      consent ?? (users.size > 0 ? { userId: users.keys().next().value as string, pageIds: undefined, decline: [] } : undefined);
    if (choice === undefined) return invalid('no user to consent as (addUser first)', 'No one is logged in to the fake (call addUser).');
    const grant = setGrant(choice.userId, scope, choice.decline, pageIdsFor(choice));
    const code = randomBytes(160).toString('base64url');
    codes.set(code, { userId: choice.userId, redirectUri: query.redirect_uri!, issuedAt: now(), used: false, granted: grant.granted });
    authorizations.push({
      query,
      outcome: 'approved',
      reason: null,
      userId: choice.userId,
      pageIds: grant.pageIds,
      granted: grant.granted,
      declined: grant.declined,
      at: now(),
    });
    return back({ code, ...(query.state === undefined ? {} : { state: query.state }) });
  });

  const issueUser = (user: string, kind: 'short' | 'long', scopes: string[], from?: string) => {
    const token = tokens.issue(user, { kind, ttlMs: (kind === 'short' ? SHORT_TTL_S : LONG_LIVED_TTL_S) * 1000, scopes });
    lineage.set(token.token, from === undefined ? token.token : (lineage.get(from) ?? from));
    return token;
  };

  const tokenAnswer = (token: MetaToken, expiresIn: number): MetaAnswer => ({
    status: 200,
    body: { access_token: token.token, token_type: 'bearer', expires_in: expiresIn },
  });

  const accessToken: Handler = (ctx) => {
    const q = ctx.query;
    if (q.client_id === undefined || q.client_id === '') return metaErrors.missingParameter('client_id');
    if (q.client_id !== clientId) return metaError({ message: 'Error validating application. Invalid application ID.', code: 101 });
    if (q.client_secret !== clientSecret) return metaError({ message: 'Error validating client secret.', code: 1 });
    if (q.grant_type === 'fb_exchange_token') {
      const from = tokens.check(q.fb_exchange_token);
      if (isMetaAnswer(from)) return from;
      if (pageTokenPage.has(from.token)) return metaErrors.invalidParameter('fb_exchange_token must be a user access token.');
      return tokenAnswer(issueUser(from.userId, 'long', from.scopes, from.token), LONG_LIVED_TTL_S);
    }
    if (q.grant_type !== undefined && q.grant_type !== 'authorization_code')
      return metaErrors.invalidParameter(`Unsupported grant_type ${q.grant_type} (the fake knows authorization_code and fb_exchange_token).`);
    if (q.code === undefined || q.code === '') return metaErrors.missingParameter('code');
    if (q.redirect_uri === undefined) return metaErrors.missingParameter('redirect_uri');
    const code = codes.get(q.code);
    if (code === undefined) return metaErrors.invalidParameter('Invalid verification code format.');
    if (code.used) return fbErrors.code(36009, 'This authorization code has been used.');
    if (now() - code.issuedAt > CODE_TTL_MS) return fbErrors.code(36007, 'This authorization code has expired.');
    if (q.redirect_uri !== code.redirectUri)
      return fbErrors.code(
        36008,
        'Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the OAuth dialog request',
      );
    code.used = true;
    return tokenAnswer(issueUser(code.userId, 'short', code.granted), SHORT_TTL_S);
  };
  graph('GET', '/oauth/access_token', 'token', accessToken);
  graph('POST', '/oauth/access_token', 'token', accessToken);

  // --- Me ------------------------------------------------------------------------------------------

  graph('GET', '/me', 'me', (ctx) => {
    const token = live(ctx);
    if (isMetaAnswer(token)) return token;
    const page = pages.get(pageOf(ctx.token) ?? '');
    if (page !== undefined) {
      const fields = fieldsOf(ctx, ['id', 'name', 'category'], ['name', 'id']);
      if (isMetaAnswer(fields)) return fields;
      return { status: 200, body: pick(fields, { id: page.id, name: page.name, category: page.category }) };
    }
    const user = users.get(token.userId)!;
    const [first, ...rest] = user.name.split(' ');
    const fields = fieldsOf(ctx, ['id', 'name', 'first_name', 'last_name', 'short_name'], ['name', 'id']);
    if (isMetaAnswer(fields)) return fields;
    return { status: 200, body: pick(fields, { id: user.id, name: user.name, first_name: first, last_name: rest.join(' ') || undefined, short_name: first }) };
  });

  graph('GET', '/me/permissions', 'me', (ctx) => {
    const token = live(ctx);
    if (isMetaAnswer(token)) return token;
    if (pageOf(ctx.token) !== undefined) return metaErrors.nonexistingField('permissions');
    const grant = grants.get(token.userId);
    const data = [
      { permission: 'public_profile', status: 'granted' },
      ...(grant === undefined
        ? token.scopes.map((permission) => ({ permission, status: 'granted' }))
        : grant.requested
            .filter((s) => s !== 'public_profile')
            .map((permission) => ({ permission, status: grant.granted.includes(permission) ? 'granted' : 'declined' }))),
    ];
    return { status: 200, body: { data } };
  });

  /** The Page token /me/accounts gives: one per (user-token lineage, Page), ending with a short-lived user token. */
  const pageTokenOf = (user: MetaToken, page: FacebookPage) => {
    const key = `${lineage.get(user.token) ?? user.token}:${user.kind}:${page.id}`;
    const known = pageTokenFor.get(key);
    const existing = known === undefined ? undefined : tokens.get(known);
    if (existing !== undefined && !existing.dead && now() < existing.expiresAt) return existing.token;
    const ttlMs = user.kind === 'long' ? Number.POSITIVE_INFINITY : user.expiresAt - now();
    const token = tokens.issue(user.userId, { kind: 'page', ttlMs, scopes: user.scopes });
    pageTokenPage.set(token.token, page.id);
    pageTokenFor.set(key, token.token);
    return token.token;
  };

  const pageJson = (page: FacebookPage, user: MetaToken | null, fields: string[]) =>
    pick(fields, {
      id: page.id,
      name: page.name,
      access_token: user === null ? undefined : pageTokenOf(user, page),
      tasks: user === null ? undefined : [...page.tasks],
      category: page.category,
      category_list: [{ id: '2612', name: page.category }],
      picture: { data: { height: 50, is_silhouette: false, url: `https://scontent.xx.fbcdn.net/v/t39.30808-1/${page.id}_n.jpg`, width: 50 } },
    });
  const PAGE_FIELDS = ['id', 'name', 'access_token', 'tasks', 'category', 'category_list', 'picture'];

  /** Cursor paging over a list: `limit` (1–100, else default), `after`/`before` cursors (base64url of the id). */
  const paged = <T extends { id: string }>(ctx: MetaRouteContext, list: T[], path: string, fallback: number): { items: T[]; paging?: unknown } | MetaAnswer => {
    const limit = ctx.query.limit === undefined ? fallback : Number(ctx.query.limit);
    if (!Number.isInteger(limit) || limit < 0) return metaErrors.invalidParameter(`The parameter limit must be a non-negative integer.`);
    const size = Math.min(limit === 0 ? fallback : limit, 100);
    const cursor = (id: string) => Buffer.from(id).toString('base64url');
    let from = 0;
    if (ctx.query.after !== undefined) {
      const id = Buffer.from(ctx.query.after, 'base64url').toString('utf8');
      const at = list.findIndex((item) => item.id === id);
      if (at === -1) return metaErrors.invalidParameter('The after cursor is not valid.');
      from = at + 1;
    }
    const items = list.slice(from, from + size);
    if (items.length === 0) return { items };
    const next = new URL(`${origin(ctx.req)}/${ctx.params.version}${path}`);
    for (const [name, value] of Object.entries(ctx.query)) if (name !== 'after' && name !== 'before') next.searchParams.set(name, value);
    next.searchParams.set('limit', String(size));
    next.searchParams.set('after', cursor(items[items.length - 1]!.id));
    const more = from + size < list.length;
    return {
      items,
      paging: { cursors: { before: cursor(items[0]!.id), after: cursor(items[items.length - 1]!.id) }, ...(more ? { next: next.href } : {}) },
    };
  };

  graph('GET', '/me/accounts', 'accounts', (ctx) => {
    const token = live(ctx);
    if (isMetaAnswer(token)) return token;
    if (pageOf(ctx.token) !== undefined) return metaErrors.nonexistingField('accounts');
    const fields = fieldsOf(ctx, PAGE_FIELDS, ['access_token', 'category', 'category_list', 'name', 'id', 'tasks']);
    if (isMetaAnswer(fields)) return fields;
    const grant = grants.get(token.userId);
    const shown = !token.scopes.includes('pages_show_list')
      ? []
      : [...pages.values()].filter((p) => p.ownerId === token.userId && (grant === undefined || grant.pageIds.includes(p.id)));
    const page = paged(ctx, shown, '/me/accounts', 25);
    if (isMetaAnswer(page)) return page;
    return { status: 200, body: { data: page.items.map((p) => pageJson(p, token, fields)), ...(page.paging === undefined ? {} : { paging: page.paging }) } };
  });

  // --- Photos --------------------------------------------------------------------------------------

  const sniffImage = (b: Buffer): string | null => {
    const head = b.subarray(0, 12).toString('latin1');
    if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
    if (head.startsWith('\x89PNG\r\n\x1a\n')) return 'image/png';
    if (head.startsWith('GIF87a') || head.startsWith('GIF89a')) return 'image/gif';
    if (head.startsWith('BM') && b.length > 26) return 'image/bmp';
    if (head.startsWith('II*\x00') || head.startsWith('MM\x00*')) return 'image/tiff';
    if (head.startsWith('RIFF') && head.slice(8, 12) === 'WEBP') return 'image/webp';
    return null;
  };

  graph('POST', '/:id/photos', 'photos', async (ctx) => {
    const writer = pageWriter(ctx, ctx.params.id!, ['pages_manage_posts', 'pages_read_engagement'], 'CREATE_CONTENT');
    if (isMetaAnswer(writer)) return writer;
    const { page } = writer;
    const q = ctx.query;
    const caption = q.caption ?? q.message ?? null;
    if (caption !== null && caption.length > MAX_TEXT) return fbErrors.tooLong(q.caption === undefined ? 'message' : 'caption', caption.length);
    let bytes: Buffer;
    const file = ctx.body instanceof MetaMultipart ? ctx.body.files.source : undefined;
    if (file !== undefined) {
      bytes = file.bytes;
    } else if (q.url !== undefined && q.url !== '') {
      const fetched = await fetchMediaLikeMeta(q.url, { accept: PHOTO_TYPES, maxBytes: MAX_PHOTO_BYTES });
      fetches.push(toFetchRecord(fetched));
      if (!fetched.ok) {
        if (fetched.reason === 'bad_url') return metaErrors.invalidParameter('url should represent a valid URL');
        return fetched.reason === 'size' || fetched.reason === 'type' ? fbErrors.photoUnreadable() : fbErrors.photoNotFetched();
      }
      bytes = fetched.bytes;
    } else {
      return fbErrors.photoMissing();
    }
    const mime = sniffImage(bytes);
    if (mime === null || bytes.length > MAX_PHOTO_BYTES) return fbErrors.photoUnreadable();
    const published = flag(q.published, true);
    const photo: FacebookPhoto = { id: objectId(), pageId: page.id, bytes, mime, published, caption, postId: null, createdTime: metaTimestamp(now()) };
    photos.set(photo.id, photo);
    if (!published) return { status: 200, body: { id: photo.id } };
    const post = newPost(page, { message: caption ?? '', link: null, photos: [{ id: photo.id, bytes, mime }], videoId: null });
    photo.postId = post.id;
    return { status: 200, body: { id: photo.id, post_id: post.id } };
  });

  // --- Feed ----------------------------------------------------------------------------------------

  /** `attached_media[0]={"media_fbid":"…"}` form keys, `attached_media[0][media_fbid]=…`, or a JSON array. */
  const attachedMedia = (q: Record<string, string>): { ids: string[] } | MetaAnswer => {
    const entries: [string, unknown][] = [];
    if (q.attached_media !== undefined) {
      let list: unknown;
      try {
        list = JSON.parse(q.attached_media);
      } catch {
        return metaErrors.invalidParameter('param attached_media must be an array.');
      }
      if (!Array.isArray(list)) return metaErrors.invalidParameter('param attached_media must be an array.');
      (list as unknown[]).forEach((item, i) => entries.push([`attached_media[${i}]`, item]));
    }
    const indexed = Object.keys(q)
      .map((key) => /^attached_media\[(\d+)\](?:\[media_fbid\])?$/.exec(key))
      .filter((m): m is RegExpExecArray => m !== null)
      .sort((a, b) => Number(a[1]) - Number(b[1]));
    for (const m of indexed) {
      const raw = q[m[0]]!;
      if (m[0].endsWith('[media_fbid]')) {
        entries.push([`attached_media[${m[1]}]`, { media_fbid: raw }]);
        continue;
      }
      try {
        const item: unknown = JSON.parse(raw);
        entries.push([`attached_media[${m[1]}]`, item]);
      } catch {
        return metaErrors.invalidParameter(`param attached_media[${m[1]}] must be a JSON object.`);
      }
    }
    const ids: string[] = [];
    for (const [name, item] of entries) {
      const id = isObject(item) ? item.media_fbid : undefined;
      if (typeof id !== 'string' && typeof id !== 'number') return metaErrors.invalidParameter(`param ${name} must be an object with a media_fbid.`);
      ids.push(String(id));
    }
    return { ids };
  };

  graph(
    'POST',
    '/:id/feed',
    'feed',
    (ctx) => {
      const writer = pageWriter(ctx, ctx.params.id!, ['pages_manage_posts', 'pages_read_engagement'], 'CREATE_CONTENT');
      if (isMetaAnswer(writer)) return writer;
      const { page } = writer;
      const q = ctx.query;
      if (!flag(q.published, true) || q.scheduled_publish_time !== undefined)
        return metaErrors.invalidParameter('Unpublished and scheduled posts are not implemented by the fake (Herald schedules itself).');
      const message = q.message ?? '';
      if (message.length > MAX_TEXT) return fbErrors.tooLong('message', message.length);
      const link = q.link === undefined || q.link === '' ? null : q.link;
      if (link !== null && !/^https?:\/\/[^\s/]+\.[^\s]+$/i.test(link))
        return metaError({ message: '(#100) The link is invalid.', code: 100, error_subcode: 1609005 });
      const media = attachedMedia(q);
      if (isMetaAnswer(media)) return media;
      if (message === '' && link === null && media.ids.length === 0) return metaErrors.invalidParameter('Missing message or attachment');
      const attached: FacebookPhoto[] = [];
      for (const [i, id] of media.ids.entries()) {
        const photo = photos.get(id);
        if (photo === undefined || photo.pageId !== page.id || photo.published)
          return metaErrors.invalidParameter(`attached_media[${i}]: ${id} is not an unpublished photo of this Page.`);
        if (photo.postId !== null || attached.includes(photo))
          return metaErrors.invalidParameter(`attached_media[${i}]: photo ${id} is already attached to a post.`);
        attached.push(photo);
      }
      const previous = posts.filter((p) => p.pageId === page.id).at(-1);
      if (message !== '' && previous?.message === message) return fbErrors.duplicate();
      const post = newPost(page, { message, link, photos: attached.map((p) => ({ id: p.id, bytes: p.bytes, mime: p.mime })), videoId: null });
      for (const photo of attached) photo.postId = post.id;
      const fields = (q.fields ?? '').split(',');
      return { status: 200, body: { id: post.id, ...(fields.includes('permalink_url') ? { permalink_url: post.permalinkUrl } : {}) } };
    },
    (ctx) => {
      const message = ctx.query.message ?? '';
      feedCalls.set(message, (feedCalls.get(message) ?? 0) + 1);
    },
  );

  // --- Videos --------------------------------------------------------------------------------------

  const newVideo = (page: FacebookPage, fileSize: number, session: string | null): FacebookVideo => {
    const video: FacebookVideo = {
      id: objectId(),
      pageId: page.id,
      uploadSessionId: session,
      fileSize,
      bytes: Buffer.alloc(0),
      state: 'uploading',
      pollsLeft: 0,
      failure: null,
      description: '',
      title: null,
      postId: null,
      createdTime: metaTimestamp(now()),
    };
    videos.set(video.id, video);
    if (session !== null) sessions.set(session, video.id);
    return video;
  };

  const finish = (video: FacebookVideo, q: Record<string, string>) => {
    const description = q.description ?? '';
    if (description.length > MAX_TEXT) return fbErrors.tooLong('description', description.length);
    video.description = description;
    video.title = q.title ?? null;
    video.state = 'processing';
    video.pollsLeft = videoPolls;
    video.failure = plannedVideoFailures.shift() ?? null;
    return undefined;
  };

  const offsets = (video: FacebookVideo) => ({
    start_offset: String(video.bytes.length),
    end_offset: String(Math.min(video.bytes.length + CHUNK_BYTES, video.fileSize)),
  });

  graph('POST', '/:id/videos', 'videos', async (ctx) => {
    const writer = pageWriter(ctx, ctx.params.id!, ['pages_show_list', 'pages_manage_posts', 'pages_read_engagement'], 'CREATE_CONTENT');
    if (isMetaAnswer(writer)) return writer;
    const { page } = writer;
    const q = ctx.query;
    const file = (name: string) => (ctx.body instanceof MetaMultipart ? ctx.body.files[name] : undefined);
    const session = (): FacebookVideo | MetaAnswer => {
      const video = videos.get(sessions.get(q.upload_session_id ?? '') ?? '');
      if (q.upload_session_id === undefined) return metaErrors.missingParameter('upload_session_id');
      if (video === undefined || video.pageId !== page.id)
        return fbErrors.video(1363019, 'There was a problem uploading your video. Please try uploading it again.');
      return video;
    };
    switch (q.upload_phase) {
      case 'start': {
        const size = Number(q.file_size ?? Number.NaN);
        if (q.file_size === undefined) return metaErrors.missingParameter('file_size');
        if (!Number.isInteger(size) || size < 0) return metaErrors.invalidParameter('param file_size must be an integer.');
        if (size < MIN_VIDEO_BYTES)
          return fbErrors.video(
            1363022,
            'The video you tried to upload is too small. The minimum size for a video is 1 KB. Please try again with a larger file.',
          );
        if (size > MAX_VIDEO_BYTES)
          return fbErrors.video(
            1363023,
            'The video you tried to upload is too large. The maximum size for a video is 10 GB. Please try again with a smaller file.',
          );
        const video = newVideo(page, size, sessionId());
        return {
          status: 200,
          body: { video_id: video.id, start_offset: '0', end_offset: offsets(video).end_offset, upload_session_id: video.uploadSessionId },
        };
      }
      case 'transfer': {
        const video = session();
        if (isMetaAnswer(video)) return video;
        const expected = offsets(video);
        const wrongOffset = () =>
          fbErrors.video(1363037, 'There was a problem uploading your video. Please try uploading it again.', {
            start_offset: expected.start_offset,
            end_offset: expected.end_offset,
          });
        if (video.state !== 'uploading' || q.start_offset !== expected.start_offset || video.bytes.length >= video.fileSize) return wrongOffset();
        const chunk = file('video_file_chunk');
        if (chunk === undefined) return metaErrors.missingParameter('video_file_chunk');
        if (chunk.bytes.length !== Number(expected.end_offset) - Number(expected.start_offset))
          return fbErrors.video(1363019, 'There was a problem uploading your video. Please try uploading it again.');
        video.bytes = Buffer.concat([video.bytes, chunk.bytes]);
        return { status: 200, body: offsets(video) };
      }
      case 'finish': {
        const video = session();
        if (isMetaAnswer(video)) return video;
        if (video.state !== 'uploading') return { status: 200, body: { success: true } };
        if (video.bytes.length !== video.fileSize)
          return fbErrors.video(
            1363019,
            `There was a problem uploading your video. Please try uploading it again. (${video.bytes.length} of ${video.fileSize} bytes received)`,
          );
        const refused = finish(video, q);
        return refused ?? { status: 200, body: { success: true } };
      }
      case 'cancel': {
        const video = session();
        if (isMetaAnswer(video)) return video;
        if (video.state !== 'uploading') return fbErrors.video(1363019, 'There was a problem uploading your video. Please try uploading it again.');
        sessions.delete(video.uploadSessionId ?? '');
        videos.delete(video.id);
        return { status: 200, body: { success: true } };
      }
      case undefined: {
        let bytes: Buffer;
        const source = file('source');
        if (source !== undefined) {
          bytes = source.bytes;
        } else if (q.file_url !== undefined && q.file_url !== '') {
          const fetched = await fetchMediaLikeMeta(q.file_url, { accept: VIDEO_TYPES, maxBytes: MAX_FETCHED_VIDEO });
          fetches.push(toFetchRecord(fetched));
          if (!fetched.ok) return fbErrors.video(1363019, `There was a problem uploading your video. Please try uploading it again. (${fetched.detail})`);
          bytes = fetched.bytes;
        } else {
          return metaErrors.missingParameter('source');
        }
        if (bytes.length < MIN_VIDEO_BYTES)
          return fbErrors.video(
            1363022,
            'The video you tried to upload is too small. The minimum size for a video is 1 KB. Please try again with a larger file.',
          );
        const video = newVideo(page, bytes.length, null);
        video.bytes = bytes;
        const refused = finish(video, q);
        if (refused !== undefined) {
          videos.delete(video.id);
          return refused;
        }
        return { status: 200, body: { id: video.id } };
      }
      default:
        return metaErrors.invalidParameter(`param upload_phase must be one of {start, transfer, finish, cancel}.`);
    }
  });

  /** A status poll: moves processing on (the fake's model: `videoPolls` processing answers, then the end). */
  const poll = (video: FacebookVideo) => {
    if (video.state !== 'processing') return;
    if (video.pollsLeft > 0) {
      video.pollsLeft -= 1;
      return;
    }
    if (video.failure !== null) {
      video.state = 'error';
      return;
    }
    video.state = 'ready';
    const page = pages.get(video.pageId)!;
    const post = newPost(page, { message: video.description, link: null, photos: [], videoId: video.id });
    video.postId = post.id;
  };

  const videoStatus = (video: FacebookVideo) => {
    const phase = (status: string) => ({ status });
    const uploaded = { status: video.state === 'uploading' ? 'in_progress' : 'complete', bytes_transferred: video.bytes.length };
    switch (video.state) {
      case 'uploading':
        return { video_status: 'processing', uploading_phase: uploaded, processing_phase: phase('not_started'), publishing_phase: phase('not_started') };
      case 'processing': {
        const total = videoPolls + 1;
        return {
          video_status: 'processing',
          processing_progress: Math.max(0, Math.round((100 * (total - video.pollsLeft - 1)) / total)),
          uploading_phase: uploaded,
          processing_phase: phase('in_progress'),
          publishing_phase: phase('not_started'),
        };
      }
      case 'error':
        return {
          video_status: 'error',
          processing_progress: 100,
          uploading_phase: uploaded,
          processing_phase: { status: 'error', errors: [{ code: 1363008, message: video.failure }] },
          publishing_phase: phase('not_started'),
        };
      case 'ready': {
        const post = video.postId === null ? undefined : postsById.get(video.postId);
        return {
          video_status: 'ready',
          processing_progress: 100,
          uploading_phase: uploaded,
          processing_phase: phase('complete'),
          publishing_phase: { status: 'complete', publish_status: 'published', publish_time: post?.createdTime ?? metaTimestamp(now()) },
        };
      }
    }
  };

  // --- Reading objects -----------------------------------------------------------------------------

  /** Which kind of object an id is, for the fault target. */
  const kindOf = (id: string): Target | undefined =>
    videos.has(id) ? 'status' : postsById.has(id) ? 'posts' : photos.has(id) ? 'photos' : comments.has(id) ? 'comment' : pages.has(id) ? 'accounts' : undefined;

  graph(
    'GET',
    '/:id',
    (ctx) => kindOf(ctx.params.id ?? ''),
    (ctx) => {
      const token = live(ctx);
      if (isMetaAnswer(token)) return token;
      const id = ctx.params.id!;
      const video = videos.get(id);
      if (video !== undefined) {
        if (!canSee(token, ctx, video.pageId)) return metaErrors.unsupportedGet(id);
        const fields = fieldsOf(
          ctx,
          ['id', 'status', 'post_id', 'permalink_url', 'description', 'title', 'published', 'created_time', 'updated_time', 'length'],
          ['updated_time', 'description', 'id'],
        );
        if (isMetaAnswer(fields)) return fields;
        if (fields.includes('status')) poll(video);
        return {
          status: 200,
          body: pick(fields, {
            id: video.id,
            status: videoStatus(video),
            post_id: video.postId ?? undefined,
            permalink_url: `/${video.pageId}/videos/${video.id}/`,
            description: video.description === '' ? undefined : video.description,
            title: video.title ?? undefined,
            published: video.state === 'ready',
            created_time: video.createdTime,
            updated_time: video.createdTime,
          }),
        };
      }
      const post = postsById.get(id);
      if (post !== undefined) {
        if (!canSee(token, ctx, post.pageId)) return metaErrors.unsupportedGet(id);
        const fields = fieldsOf(ctx, POST_FIELDS, ['created_time', 'message', 'id']);
        if (isMetaAnswer(fields)) return fields;
        return { status: 200, body: postJson(post, fields) };
      }
      const photo = photos.get(id);
      if (photo !== undefined) {
        if (!canSee(token, ctx, photo.pageId)) return metaErrors.unsupportedGet(id);
        const fields = fieldsOf(ctx, ['id', 'created_time', 'name', 'link', 'page_story_id', 'width', 'height'], ['created_time', 'id']);
        if (isMetaAnswer(fields)) return fields;
        return {
          status: 200,
          body: pick(fields, {
            id: photo.id,
            created_time: photo.createdTime,
            name: photo.caption ?? undefined,
            link: `https://www.facebook.com/photo.php?fbid=${photo.id}`,
            page_story_id: photo.published ? (photo.postId ?? undefined) : undefined,
          }),
        };
      }
      const comment = comments.get(id);
      if (comment !== undefined) {
        const onPost = postsById.get(comment.postId)!;
        if (!canSee(token, ctx, onPost.pageId)) return metaErrors.unsupportedGet(id);
        const fields = fieldsOf(ctx, ['id', 'message', 'created_time', 'permalink_url'], ['created_time', 'message', 'id']);
        if (isMetaAnswer(fields)) return fields;
        return {
          status: 200,
          body: pick(fields, {
            id,
            message: comment.comment.message,
            created_time: comment.comment.createdTime,
            permalink_url: `${onPost.permalinkUrl}?comment_id=${id.split('_')[1] ?? id}`,
          }),
        };
      }
      const page = pages.get(id);
      if (page !== undefined) {
        const fields = fieldsOf(ctx, PAGE_FIELDS, ['name', 'id']);
        if (isMetaAnswer(fields)) return fields;
        const own = pageOf(ctx.token) === undefined && page.ownerId === token.userId && (grants.get(token.userId)?.pageIds.includes(page.id) ?? true);
        if (fields.includes('access_token') && !own) return fbErrors.pageTokenRequired();
        return { status: 200, body: pageJson(page, own ? token : null, fields) };
      }
      return metaErrors.unsupportedGet(id);
    },
  );

  const listPosts =
    (edge: 'published_posts' | 'feed'): Handler =>
    (ctx) => {
      const token = live(ctx);
      if (isMetaAnswer(token)) return token;
      const id = ctx.params.id!;
      const page = pages.get(id);
      if (page === undefined) return metaErrors.unsupportedGet(id);
      if (pageOf(ctx.token) !== id) return fbErrors.pageTokenRequired();
      if (!token.scopes.includes('pages_read_engagement'))
        return metaErrors.permissionsError('Access to this resource requires the pages_read_engagement permission.');
      const fields = fieldsOf(ctx, POST_FIELDS, ['created_time', 'message', 'id']);
      if (isMetaAnswer(fields)) return fields;
      const time = (name: 'since' | 'until'): number | null | undefined => {
        const value = ctx.query[name];
        if (value === undefined || value === '') return undefined;
        if (/^\d+$/.test(value)) return Number(value) * 1000;
        const ms = Date.parse(value.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
        return Number.isNaN(ms) ? null : ms;
      };
      const since = time('since');
      const until = time('until');
      if (since === null || until === null) return metaErrors.invalidParameter('The parameters since and until must be unix timestamps or strtotime() dates.');
      const list = posts
        .filter((p) => p.pageId === id)
        .filter((p) => {
          const t = postTimes.get(p.id)!;
          return (since === undefined || t >= since) && (until === undefined || t <= until);
        })
        .reverse();
      const shown = paged(ctx, list, `/${id}/${edge}`, 25);
      if (isMetaAnswer(shown)) return shown;
      return { status: 200, body: { data: shown.items.map((p) => postJson(p, fields)), ...(shown.paging === undefined ? {} : { paging: shown.paging }) } };
    };
  graph('GET', '/:id/published_posts', 'posts', listPosts('published_posts'));
  graph('GET', '/:id/feed', 'posts', listPosts('feed'));

  // --- Comments ------------------------------------------------------------------------------------

  graph('POST', '/:id/comments', 'comment', (ctx) => {
    const token = live(ctx);
    if (isMetaAnswer(token)) return token;
    const id = ctx.params.id!;
    const video = videos.get(id);
    const post = postsById.get(video?.postId ?? id);
    if (post === undefined) return metaErrors.unsupportedPost(id);
    const page = pages.get(post.pageId)!;
    if (pageOf(ctx.token) === undefined) {
      if (page.ownerId !== token.userId) return metaErrors.unsupportedPost(id);
      return metaErrors.permissionsError('Commenting as the Page requires a Page access token.');
    }
    if (pageOf(ctx.token) !== page.id) return metaErrors.permissionsError();
    if (!token.scopes.includes('pages_manage_engagement'))
      return metaErrors.permissionsError('The pages_manage_engagement permission is required to comment as the Page.');
    if (!page.tasks.includes('MODERATE') && !page.tasks.includes('MANAGE'))
      return metaErrors.permissionsError('The user must be able to perform the MODERATE task on the Page.');
    const message = ctx.query.message ?? '';
    if (message === '' && ctx.query.attachment_url === undefined && ctx.query.attachment_id === undefined)
      return metaErrors.invalidParameter('Missing message or attachment');
    const part = post.id.split('_')[1] ?? post.id;
    const comment: FacebookComment = { id: `${part}_${objectId()}`, message, createdTime: metaTimestamp(now()) };
    post.comments.push(comment);
    comments.set(comment.id, { postId: post.id, comment });
    return { status: 200, body: { id: comment.id } };
  });

  const url = await listenLocal(app);

  const ownedBy = (user: FacebookUser) => {
    if (!users.has(user.id)) throw new Error(`no user ${user.id}`);
  };

  return {
    url,
    clientId,
    clientSecret,
    addUser(user = {}) {
      const id = userId();
      const added = { id, name: user.name ?? `Test User ${users.size + 1}` };
      users.set(id, added);
      return { ...added };
    },
    addPage(user, page) {
      ownedBy(user);
      const added: FacebookPage = {
        id: pageId(),
        name: page.name,
        ownerId: user.id,
        tasks: [...(page.tasks ?? ALL_TASKS)],
        category: page.category ?? 'Community',
      };
      pages.set(added.id, added);
      return { id: added.id, name: added.name };
    },
    consentAs(user, pageIds, consentOptions = {}) {
      ownedBy(user);
      for (const id of pageIds ?? []) if (pages.get(id)?.ownerId !== user.id) throw new Error(`page ${id} is not managed by user ${user.id}`);
      consent = { userId: user.id, pageIds: pageIds === undefined ? undefined : [...pageIds], decline: [...(consentOptions.decline ?? [])] };
    },
    refuseNextConsent() {
      refuseNext = true;
    },
    grant(user, pageIds, consentOptions = {}) {
      ownedBy(user);
      const grant = setGrant(user.id, [...FACEBOOK_SCOPES], consentOptions.decline ?? [], pageIdsFor({ userId: user.id, pageIds }));
      return issueUser(user.id, 'long', grant.granted).token;
    },
    pageToken(page) {
      const found = pages.get(page.id);
      if (found === undefined) throw new Error(`no page ${page.id}`);
      const token = tokens.issue(found.ownerId, { kind: 'page', ttlMs: Number.POSITIVE_INFINITY, scopes: [...FACEBOOK_SCOPES] });
      pageTokenPage.set(token.token, found.id);
      return token.token;
    },
    changePassword(user) {
      ownedBy(user);
      tokens.killUser(user.id);
    },
    throttle(id, minutes) {
      meter.throttle(id, minutes);
    },
    authorizations,
    posts,
    photos,
    videos,
    pages,
    feedCalls,
    fetches,
    requests: recorder.requests,
    fail(target, fault) {
      faults.push(target, fault);
    },
    get videoPolls() {
      return videoPolls;
    },
    set videoPolls(polls: number) {
      videoPolls = polls;
    },
    failNextVideo(message = "The video file you selected is in a format that we don't support.") {
      plannedVideoFailures.push(message);
    },
    advance(ms) {
      offsetMs += ms;
    },
    close: () => app.close(),
  };
}

/** How long a short-lived user token from the code exchange lasts (the fake's figure within Meta's "an hour or two"). */
export const FACEBOOK_SHORT_TOKEN_TTL_MS = SHORT_TTL_S * 1000;
/** For tests that reason about the 60-day token. */
export const FACEBOOK_LONG_TOKEN_TTL_MS = LONG_LIVED_TTL_S * 1000;
/** How long a code lives. */
export const FACEBOOK_CODE_TTL_MS = CODE_TTL_MS;
