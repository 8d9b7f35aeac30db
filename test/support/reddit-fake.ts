import { createHash, randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import {
  basicClientMatches,
  CodeStore,
  createFakeApp,
  createFakeState,
  escapeXml,
  fakeControls,
  fakeRoute,
  installConsentPage,
  isAnswer,
  isObject,
  listenLocal,
  MultipartBody,
  plannedAnswer,
  stateOf,
  stringFields,
  withSettings,
  type Answer,
  type AnswerFault,
  type Authorization,
  type Fake,
  type FakeOptions,
  type Fault,
  type HintedRevocation,
  type RecordedRequest,
} from './fake-kit.js';

/**
 * An in-process Reddit, for the calls Herald makes. `url` stands for https://www.reddit.com (consent, token,
 * revoke), https://oauth.reddit.com (the API) and the media upload bucket (POST /fake-s3): the paths do not
 * collide. Reddit has no current official reference in the store; this follows the research note
 * /work/shared/reference/platform-apis-x-linkedin-pinterest-reddit.md §5, whose sources are:
 * - reddit-archive/reddit wiki OAuth2 [RD1]: GET /api/v1/authorize?client_id&response_type=code&state
 *   &redirect_uri&duration=permanent|temporary&scope (back to redirect_uri with `state` and `code`, or
 *   `error=access_denied`); POST /api/v1/access_token with `Authorization: Basic base64(client_id:secret)` (the
 *   wiki's example is `curl --user 'p-jcoLKBynTLew:gko_LXELoV07ZBNUXrvWZfzE3aI'`: compared byte for byte, as
 *   registered; Reddit splits the decoded header at `:` without percent-decoding), form
 *   grant_type=authorization_code (code, redirect_uri) → `{access_token, token_type, expires_in, scope,
 *   refresh_token}` (a refresh token only with duration=permanent) and grant_type=refresh_token; POST
 *   /api/v1/revoke_token (token, token_type_hint);
 * - reddit-archive/reddit wiki API and r/redditdev 2014 "Formal ratelimiting headers" [RD2]: a unique
 *   `<platform>:<app id>:<version> (by /u/<username>)` User-Agent, generic ones throttled; `X-Ratelimit-Used`,
 *   `X-Ratelimit-Remaining`, `X-Ratelimit-Reset` (seconds to the end of a 10-minute window); [RD3] 100 requests
 *   a minute per OAuth client id since 2023-07-01;
 * - reddit-archive/reddit r2 api.py, validator.py, listingcontroller.py [RDA]: POST /api/submit answers
 *   `{json:{errors, data:{url, id, name}}}`, business errors as HTTP 200 `json.errors` [[CODE, message, field]]
 *   (SUBREDDIT_NOEXIST, NO_SELFS, NO_LINKS, TITLE_TOO_LONG, TOO_LONG, ALREADY_SUB, NO_TEXT, NO_URL), title ≤300,
 *   comment ≤10,000, self text 40,000; /user/{name}/submitted needs scope `history`; RATELIMIT "Looks like
 *   you've been doing that a lot. Take a break for N minutes before trying again." field `ratelimit` with
 *   `json.ratelimit` seconds (praw#1954, Infinity-For-Reddit#1250, reddit pull/380);
 * - praw-dev/praw@7b69758 media.py, subreddit.py [PRAW]: POST /api/media/asset.json (filepath, mimetype) →
 *   `{args:{action:'//…', fields:[{name,value}]}, asset:{asset_id, websocket_url}}`; POST `https:<action>`
 *   multipart with every field then `file` → S3 XML with `<Location>`, or XML Code/Message/ProposedSize/
 *   MaxSizeAllowed when too big; image submit `kind=image&url=<action>/<key>` answers `websocket_url` and no
 *   id; POST /api/submit_gallery_post.json JSON `{sr, title, api_type, show_error_list, items:[{media_id,
 *   caption ≤180, outbound_url}]}` → `json.data.url`;
 * - gitroomhq/postiz-app reddit.provider.ts [PZR]: GET /api/v1/me → `{name, id, icon_img}`; POST /api/comment
 *   (thing_id=t3_…, text) → `json.data.things[0].data{id, name, permalink}`; the in-doubt check reads
 *   /user/{name}/submitted?sort=new&limit=25 and image posts may show there late;
 * - S3 POST (docs.aws.amazon.com/AmazonS3/latest/API/RESTObjectPOST.html): `success_action_status=201` answers 201
 *   with `<PostResponse><Location/><Bucket/><Key/><ETag/></PostResponse>`, otherwise 204; fields after the file
 *   are ignored.
 * Choices of the fake (the sources are silent or unsure):
 * - the window is 10 minutes, aligned to the clock, `ratePerWindow` (100) API requests per client, counted on
 *   the oauth.reddit.com routes only; over it, or with a missing or generic User-Agent (`node`, `undici`,
 *   `node-fetch`, `axios`, `curl`, `python-requests`, `Go-http-client`, `got`) or one not of the rules' form
 *   `<platform>:<app ID>:<version> (by /u/<username>)`, 429
 *   `{message:'Too Many Requests', error:429}` (the User-Agent check covers the token and revoke endpoints too);
 * - the code lives 10 minutes and is single use; access tokens 3600 s; a refresh answer has no `refresh_token`
 *   unless `refreshAnswerCarriesToken` (then the same one): the refresh token stays valid, earlier access tokens
 *   stay valid until they expire; token errors are OAuth JSON, `invalid_grant` with `tokenErrorStatus` (400),
 *   401 `invalid_client` for bad client credentials, 400 `unsupported_grant_type`;
 * - revoke answers `revokeStatus` (200, as RFC 7009 and oauth4webapi want; the archived wiki may say 204), empty;
 * - 401 `{message:'Unauthorized', error:401}` and 403 `{message:'Forbidden', error:403}` (missing scope), each
 *   with a `WWW-Authenticate: Bearer realm="reddit", error=…` header;
 * - SUBMIT_VALIDATION_FLAIR_REQUIRED (field `flair`) for a flair-required subreddit without flair_id, NO_IMAGES
 *   for image or gallery posts where images are off, NO_VIDEOS where videos are off, BAD_URL for an image or
 *   video url that is no finished upload of that kind, NO_VIDEO_POSTER for a video without a finished image
 *   upload as `video_poster_url`, INVALID_OPTION for another kind (videogif too), NO_THING_ID for a comment on
 *   an unknown post, and gallery errors (TOO_FEW_ITEMS, TOO_MANY_ITEMS, MEDIA_NOT_FOUND, TOO_LONG caption) are
 *   the fake's codes;
 * - every kind of post keeps the `text` sent as its body (Reddit's "text now available on all post types",
 *   r/modnews 2022, sent beside a link's url by PRAW since praw-dev/praw#2067); a video post lists with
 *   `is_video` and a `https://v.redd.it/<asset id>` url; a video upload's size limit is `maxVideoBytes`;
 * - the upload key is `<asset id>/<file name>`; `<Location>` is
 *   `https://reddit-uploaded-media.s3-accelerate.amazonaws.com/<key>` and the image submit takes that, or
 *   `http(s):<action>/<key>` as PRAW builds it; the lease action is `//127.0.0.1:<port>/fake-s3`; the
 *   websocket_url points at nothing;
 * - the gallery answer's `id` is the fullname `t3_<id>`; an image or video post is left out of its author's submitted
 *   listing for the first `mediaPolls` (1) reads of that listing, then shows; ids are base36, sequential;
 * - `rateLimitNext(minutes)` is taken by the next submit, gallery or comment.
 * Not here: videogif posts, the websocket, GET /r/{sr}/comments/{id}, post_requirements, flair listings.
 * Faults a test plans are taken by the next matching request, in order. No timers: the clock is read on demand.
 */

export interface RedditUser {
  /** Base36, without the `t2_` prefix. */
  id: string;
  name: string;
  iconImg: string;
}

export interface RedditSubreddit {
  name: string;
  /** Reddit's `link_type`: which submissions it takes. */
  linkType: 'any' | 'self' | 'link';
  flairRequired: boolean;
  allowImages: boolean;
  allowVideos: boolean;
}

export interface RedditPostImage {
  assetId: string;
  bytes: Buffer;
  caption: string | null;
}

export interface RedditComment {
  id: string;
  author: string;
  text: string;
  createdUtc: number;
}

export interface RedditPost {
  /** Base36, without `t3_`. */
  id: string;
  /** The author's name. */
  author: string;
  /** As the subreddit was added. */
  subreddit: string;
  kind: 'self' | 'link' | 'image' | 'video' | 'gallery';
  title: string;
  /** The body text as sent (every kind takes one). */
  text: string;
  /** The url field as sent (link, image and video posts), else null. */
  url: string | null;
  /** A video post's video and poster, as uploaded. */
  video: { assetId: string; bytes: Buffer; poster: Buffer } | null;
  nsfw: boolean;
  spoiler: boolean;
  flairId: string | null;
  flairText: string | null;
  sendReplies: boolean;
  images: RedditPostImage[];
  comments: RedditComment[];
  /** Seconds, by the fake's clock. */
  createdUtc: number;
}

export interface RedditAsset {
  id: string;
  userId: string;
  filepath: string;
  mime: string;
  key: string;
  fields: Record<string, string>;
  /** Empty until uploaded. */
  bytes: Buffer;
  /** The S3 Location once uploaded, else null. */
  location: string | null;
}

export type RedditAuthorization = Authorization;

export type RedditRevocation = HintedRevocation;

export type RedditRecordedRequest = RecordedRequest;

/** token: POST /api/v1/access_token; revoke: POST /api/v1/revoke_token; me: GET /api/v1/me; submit: POST /api/submit;
 * media: POST /api/media/asset.json; upload: POST /fake-s3; gallery: POST /api/submit_gallery_post.json;
 * comment: POST /api/comment; listing: GET /user/{name}/submitted. */
export type RedditFaultTarget = 'token' | 'revoke' | 'me' | 'submit' | 'media' | 'upload' | 'gallery' | 'comment' | 'listing';

/** An `answer`'s body defaults to `{message, error: status}` (S3 XML for `upload`). */
export type RedditFault = Fault;

export interface RedditFakeOptions extends FakeOptions {
  clientId?: string;
  /** When set, the consent page refuses any other redirect_uri. */
  redirectUri?: string;
  /** Submitted-listing reads that leave a new image post out; 1 by default. */
  mediaPolls?: number;
  /** The S3 bucket's size limit for an image; 20 MB by default. */
  maxImageBytes?: number;
  /** The S3 bucket's size limit for a video; 1 GB by default. */
  maxVideoBytes?: number;
  /** API requests per client and 10-minute window; 100 by default. */
  ratePerWindow?: number;
  /** A refresh answer repeats the (unchanged) refresh token; false by default. */
  refreshAnswerCarriesToken?: boolean;
  /** Status of invalid_grant answers; 400 by default. */
  tokenErrorStatus?: number;
  /** Status of a revoke answer; 200 by default. */
  revokeStatus?: 200 | 204;
}

export interface RedditFake extends Fake<{ id: string }, RedditFaultTarget> {
  /** Stands for https://www.reddit.com, https://oauth.reddit.com and the upload bucket alike. */
  url: string;
  clientId: string;
  addUser(user: { name: string; iconImg?: string }): { id: string; name: string };
  addSubreddit(
    name: string,
    rules?: { flairRequired?: boolean; allowImages?: boolean; allowVideos?: boolean; linkType?: 'any' | 'self' | 'link' },
  ): RedditSubreddit;
  /** Tokens as a completed permanent consent would give them; all five of Herald's scopes by default. */
  grant(user: { id: string }, scopes?: string[]): { accessToken: string; refreshToken: string };
  /** POST /api/submit and POST /api/submit_gallery_post.json requests received (faulted ones too). */
  submitCalls(): number;
  /** The next submit, gallery or comment answers RATELIMIT with this many minutes. */
  rateLimitNext(minutes: number): void;
  /** Listing reads that leave image posts submitted from now on out. */
  mediaPolls: number;
  authorizations: RedditAuthorization[];
  revocations: RedditRevocation[];
  /** Posts in creation order. */
  posts: RedditPost[];
  subreddits: RedditSubreddit[];
  assets: Map<string, RedditAsset>;
}

const HERALD_SCOPES = ['identity', 'submit', 'read', 'flair', 'history'];
const KNOWN_SCOPES = new Set([
  ...HERALD_SCOPES,
  'account',
  'creddits',
  'edit',
  'modconfig',
  'modcontributors',
  'modflair',
  'modlog',
  'modmail',
  'modothers',
  'modposts',
  'modself',
  'modtraffic',
  'modwiki',
  'mysubreddits',
  'privatemessages',
  'report',
  'save',
  'structuredstyles',
  'subscribe',
  'vote',
  'wikiedit',
  'wikiread',
  '*',
]);
const CODE_TTL_MS = 10 * 60_000;
const ACCESS_TTL_S = 3600;
const WINDOW_MS = 10 * 60_000;
const MB = 1024 * 1024;
const UPLOAD_PATH = '/fake-s3';
const BUCKET = 'reddit-uploaded-media';
const BUCKET_URL = `https://${BUCKET}.s3-accelerate.amazonaws.com`;
const GENERIC_AGENTS = /^(node|undici|node-fetch|axios|curl|python-requests|python-urllib|go-http-client|got)\b/i;
/** Reddit's API rules [RD2]: `<platform>:<app ID>:<version string> (by /u/<reddit username>)`, e.g. `android:com.example.myredditapp:v1.2.3 (by /u/kemitche)`. */
const RULED_AGENT = /^[^:\s]+:[^:\s]+:[^:\s]+ \(by \/u\/[A-Za-z0-9_-]{3,20}\)$/;

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};
const redditError = (status: number) => ({ message: STATUS_TEXT[status] ?? `Error ${status}`, error: status });

interface Code {
  userId: string;
  redirectUri: string;
  scope: string[];
  permanent: boolean;
}

export async function startRedditFake(options: RedditFakeOptions = {}): Promise<RedditFake> {
  // Shaped like the wiki's `p-jcoLKBynTLew:gko_LXELoV07ZBNUXrvWZfzE3aI`, with `.` and `~` too.
  const clientId = options.clientId ?? `p-${randomBytes(9).toString('base64url')}_.~`;
  const clientSecret = options.clientSecret ?? `gko_${randomBytes(20).toString('base64url')}-.~`;
  const maxImageBytes = options.maxImageBytes ?? 20 * MB;
  const maxVideoBytes = options.maxVideoBytes ?? 1024 * MB;
  const maxBytesOf = (mime: string) => (mime.startsWith('video/') ? maxVideoBytes : maxImageBytes);
  const ratePerWindow = options.ratePerWindow ?? 100;
  const tokenErrorStatus = options.tokenErrorStatus ?? 400;
  const revokeStatus = options.revokeStatus ?? 200;
  const state = createFakeState<RedditFaultTarget>(options.now);
  const { now, recorder, tokens } = state;

  const users = new Map<string, RedditUser>();
  const subreddits: RedditSubreddit[] = [];
  const posts: RedditPost[] = [];
  const assets = new Map<string, RedditAsset>();
  const revocations: RedditRevocation[] = [];
  const codes = new CodeStore<Code>(now, CODE_TTL_MS);
  /** Listing reads an image post still waits for, by post id. */
  const hidden = new Map<string, number>();
  const rateWindow = { start: 0, used: 0 };
  const rateLimits: number[] = [];
  let refreshCount = 0;
  let submitCount = 0;
  const settings = { mediaPolls: options.mediaPolls ?? 1 };
  let nextUserId = parseInt('1a0000', 36);
  let nextPostId = parseInt('1b00000', 36);
  let nextCommentId = parseInt('k000000', 36);
  let nextAssetId = parseInt('a00000000', 36);

  const app = await createFakeApp({
    bodyLimit: 64 * MB,
    multipartFileSize: Math.max(256 * MB, maxImageBytes * 4),
    errorBody: (status, message) => ({ ...redditError(status), detail: message }),
    notFoundBody: () => redditError(404),
  });

  const seconds = () => Math.floor(now() / 1000);

  /** Counts an API request in the client's window; the rate-limit headers, and whether it is over. */
  const count = () => {
    const t = now();
    const start = Math.floor(t / WINDOW_MS) * WINDOW_MS;
    if (rateWindow.start !== start) {
      rateWindow.start = start;
      rateWindow.used = 0;
    }
    rateWindow.used += 1;
    const headers = {
      'x-ratelimit-used': String(rateWindow.used),
      'x-ratelimit-remaining': Math.max(0, ratePerWindow - rateWindow.used).toFixed(1),
      'x-ratelimit-reset': String(Math.ceil((start + WINDOW_MS - t) / 1000)),
    };
    return { headers, over: rateWindow.used > ratePerWindow };
  };

  /** The caller's user, or the answer to give instead. */
  const authenticate = (req: FastifyRequest, scope: string): RedditUser | Answer => {
    const grant = tokens.bearer(req);
    const user = grant === undefined ? undefined : users.get(grant.subject);
    if (grant === undefined || user === undefined)
      return { status: 401, body: redditError(401), headers: { 'www-authenticate': 'Bearer realm="reddit", error="invalid_token"' } };
    if (!grant.scope.includes(scope) && !grant.scope.includes('*'))
      return { status: 403, body: redditError(403), headers: { 'www-authenticate': 'Bearer realm="reddit", error="insufficient_scope"' } };
    return user;
  };

  const issueTokens = (userId: string, scope: string[], permanent: boolean) => {
    const access = `${userId.length}${parseInt(userId, 36)}-${randomBytes(22).toString('base64url')}`;
    const accessToken = tokens.issue('access', access, { subject: userId, scope, ttlMs: ACCESS_TTL_S * 1000 }).token;
    const refreshToken = permanent
      ? tokens.issue('refresh', `${parseInt(userId, 36)}-${randomBytes(22).toString('base64url')}`, { subject: userId, scope }).token
      : undefined;
    return { accessToken, refreshToken };
  };

  const tokenAnswer = (accessToken: string, scope: string[], refreshToken: string | undefined): Answer => ({
    status: 200,
    body: {
      access_token: accessToken,
      token_type: 'bearer',
      expires_in: ACCESS_TTL_S,
      scope: scope.join(' '),
      ...(refreshToken === undefined ? {} : { refresh_token: refreshToken }),
    },
  });

  const faultAnswer = (target: RedditFaultTarget, fault: AnswerFault): Answer => {
    if (target === 'upload' && fault.body === undefined)
      return {
        status: fault.status,
        headers: { 'content-type': 'application/xml', ...fault.headers },
        body: s3Xml('Error', { Code: fault.status >= 500 ? 'InternalError' : 'AccessDenied', Message: STATUS_TEXT[fault.status] ?? 'Error' }),
      };
    return plannedAnswer(fault, redditError);
  };

  /**
   * Every route but the consent page: the request recorded, a planned fault taken, the User-Agent checked,
   * API requests counted against the window, then the handler. `commitThenDrop` runs the handler and destroys
   * the socket instead of answering.
   */
  const route = (
    method: 'GET' | 'POST',
    url: string | string[],
    target: RedditFaultTarget,
    handler: (req: FastifyRequest, body: unknown) => Answer | Promise<Answer>,
    onReceive?: () => void,
  ) => {
    const api = target !== 'token' && target !== 'revoke' && target !== 'upload';
    fakeRoute(app, state, {
      method,
      url,
      target,
      admit: (req) => {
        onReceive?.();
        const window = api ? count() : { headers: {}, over: false };
        const agent = req.headers['user-agent']?.trim() ?? '';
        const generic = target !== 'upload' && (agent === '' || GENERIC_AGENTS.test(agent) || !RULED_AGENT.test(agent));
        return { headers: window.headers, refusal: generic || window.over ? { status: 429, body: redditError(429) } : null };
      },
      faultAnswer: (fault) => faultAnswer(target, fault),
      handle: handler,
    });
  };

  // --- OAuth 2.0 -------------------------------------------------------------------------------

  const errorPage = (reason: string) => `<p>Bad request (reddit.com): ${escapeXml(reason)}</p>`;
  const nobody = 'no user is signed in to the fake (call addUser)';
  const consent = installConsentPage({
    app,
    path: '/api/v1/authorize',
    recorder,
    who: 'userId',
    firstSubject: () => users.keys().next().value,
    check: (query) => {
      if (query.client_id !== clientId) return 'invalid client_id parameter';
      const redirectUri = query.redirect_uri;
      if (redirectUri === undefined || !/^https?:\/\//.test(redirectUri)) return 'invalid redirect_uri parameter';
      if (options.redirectUri !== undefined && redirectUri !== options.redirectUri) return 'invalid redirect_uri parameter';
      const invalid = (error: string, reason: string) => ({ reason, back: { error, ...stateOf(query) } });
      const scope = scopeOf(query);
      if (query.response_type !== 'code') return invalid('unsupported_response_type', 'response_type must be code');
      if (scope.length === 0 || scope.some((s) => !KNOWN_SCOPES.has(s))) return invalid('invalid_scope', `bad scope: ${query.scope ?? '(none)'}`);
      if (query.duration !== 'permanent' && query.duration !== 'temporary') return invalid('invalid_request', 'duration must be permanent or temporary');
      if (query.state === undefined) return invalid('invalid_request', 'state is required');
      return null;
    },
    errorPage,
    nobody: { reason: nobody, page: errorPage(nobody) },
    refused: (query) => ({ error: 'access_denied', ...stateOf(query) }),
    approved: (query, userId) => {
      const code = randomBytes(20).toString('base64url');
      codes.issue(code, { userId, redirectUri: query.redirect_uri!, scope: scopeOf(query), permanent: query.duration === 'permanent' });
      return { code, ...stateOf(query) };
    },
  });

  route('POST', '/api/v1/access_token', 'token', (req, body) => {
    if (!basicClientMatches(req, clientId, clientSecret)) return { status: 401, body: { error: 'invalid_client' } };
    const form = stringFields(body);
    const badGrant: Answer = { status: tokenErrorStatus, body: { error: 'invalid_grant' } };
    if (form.grant_type === 'authorization_code') {
      const code = codes.redeem(form.code);
      if (code === undefined) return badGrant;
      if (form.redirect_uri !== code.redirectUri) return badGrant;
      const issued = issueTokens(code.userId, code.scope, code.permanent);
      return tokenAnswer(issued.accessToken, code.scope, issued.refreshToken);
    }
    if (form.grant_type === 'refresh_token') {
      const refreshToken = form.refresh_token;
      const old = tokens.live('refresh', refreshToken);
      if (refreshToken === undefined || old === undefined) return badGrant;
      refreshCount += 1;
      const issued = issueTokens(old.subject, old.scope, false);
      return tokenAnswer(issued.accessToken, old.scope, options.refreshAnswerCarriesToken === true ? refreshToken : undefined);
    }
    return { status: 400, body: { error: 'unsupported_grant_type' } };
  });

  route('POST', '/api/v1/revoke_token', 'revoke', (req, body) => {
    if (!basicClientMatches(req, clientId, clientSecret)) return { status: 401, body: redditError(401) };
    const form = stringFields(body);
    if (form.token === undefined) return { status: 400, body: { error: 'invalid_request' } };
    const kind = tokens.revoke(form.token);
    if (kind === 'refresh') {
      // Revoking a refresh token revokes the access tokens issued from the same grant too (fake's reading of RD1).
      const userId = tokens.tokens.get(form.token)?.subject;
      tokens.kill((t) => t.kind === 'access' && t.subject === userId);
    }
    revocations.push({ token: form.token, tokenTypeHint: form.token_type_hint ?? null, kind });
    return { status: revokeStatus };
  });

  // --- Account ---------------------------------------------------------------------------------

  route('GET', '/api/v1/me', 'me', (req) => {
    const user = authenticate(req, 'identity');
    if (isAnswer(user)) return user;
    return { status: 200, body: { name: user.name, id: user.id, icon_img: user.iconImg, is_suspended: false, verified: true } };
  });

  // --- Posts -----------------------------------------------------------------------------------

  const ok = (data: unknown): Answer => ({ status: 200, body: { json: { errors: [], data } } });
  const err = (code: string, message: string, field: string, extra: Record<string, unknown> = {}): Answer => ({
    status: 200,
    body: { json: { ...extra, errors: [[code, message, field]] } },
  });
  const findSubreddit = (name: string | undefined) => subreddits.find((s) => s.name.toLowerCase() === (name ?? '').toLowerCase());
  const slug = (title: string) =>
    title
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 50) || 'post';
  const permalink = (post: RedditPost) => `/r/${post.subreddit}/comments/${post.id}/${slug(post.title)}/`;
  const postUrl = (post: RedditPost) => `https://www.reddit.com${permalink(post)}`;

  /** RATELIMIT when one is planned, else null. */
  const rateLimited = (): Answer | null => {
    const minutes = rateLimits.shift();
    if (minutes === undefined) return null;
    return err(
      'RATELIMIT',
      `Looks like you've been doing that a lot. Take a break for ${minutes} minute${minutes === 1 ? '' : 's'} before trying again.`,
      'ratelimit',
      { ratelimit: minutes * 60 },
    );
  };

  /** The checks shared by submit and gallery: the subreddit, title, flair; the subreddit or the answer. */
  const checkSubmission = (fields: { sr?: string; title?: string; flair_id?: string }): RedditSubreddit | Answer => {
    const planned = rateLimited();
    if (planned !== null) return planned;
    const subreddit = findSubreddit(fields.sr);
    if (subreddit === undefined) return err('SUBREDDIT_NOEXIST', "that subreddit doesn't exist", 'sr');
    const title = fields.title ?? '';
    if (title.trim() === '') return err('NO_TEXT', 'we need something here', 'title');
    if ([...title].length > 300) return err('TITLE_TOO_LONG', 'this is too long (max: 300)', 'title');
    if (subreddit.flairRequired && (fields.flair_id ?? '') === '')
      return err('SUBMIT_VALIDATION_FLAIR_REQUIRED', 'Your post must contain post flair.', 'flair');
    return subreddit;
  };

  const newPost = (author: RedditUser, subreddit: RedditSubreddit, fields: Record<string, string | undefined>, kind: RedditPost['kind']) => {
    const post: RedditPost = {
      id: (nextPostId++).toString(36),
      author: author.name,
      subreddit: subreddit.name,
      kind,
      title: fields.title ?? '',
      text: fields.text ?? '',
      url: kind === 'self' || kind === 'gallery' ? null : (fields.url ?? null),
      video: null,
      nsfw: fields.nsfw === 'true',
      spoiler: fields.spoiler === 'true',
      flairId: fields.flair_id || null,
      flairText: fields.flair_text || null,
      sendReplies: fields.sendreplies !== 'false',
      images: [],
      comments: [],
      createdUtc: seconds(),
    };
    posts.push(post);
    return post;
  };

  /** The finished upload of that kind a url names: the S3 Location or `http(s):<action>/<key>`. */
  const uploadFor = (url: string, kind: 'image' | 'video') =>
    [...assets.values()].find(
      (a) =>
        a.location !== null &&
        a.mime.startsWith(`${kind}/`) &&
        (url === a.location || url === `https:${uploadAction}/${a.key}` || url === `http:${uploadAction}/${a.key}`),
    );

  route(
    'POST',
    '/api/submit',
    'submit',
    (req, body) => {
      const user = authenticate(req, 'submit');
      if (isAnswer(user)) return user;
      const form = stringFields(body);
      const subreddit = checkSubmission(form);
      if (isAnswer(subreddit)) return subreddit;
      const kind = form.kind;
      if (kind !== 'self' && kind !== 'link' && kind !== 'image' && kind !== 'video') return err('INVALID_OPTION', 'that option is not valid', 'kind');
      if (kind === 'self' && subreddit.linkType === 'link') return err('NO_SELFS', "this subreddit doesn't allow text posts", 'sr');
      if (kind !== 'self' && subreddit.linkType === 'self') return err('NO_LINKS', 'that subreddit only allows text posts', 'sr');
      if (kind === 'self' && [...(form.text ?? '')].length > 40_000) return err('TOO_LONG', 'this is too long (max: 40000)', 'text');
      if (kind !== 'self' && (form.url ?? '') === '') return err('NO_URL', 'a url is required', 'url');
      if (kind === 'link') {
        const earlier = posts.find((p) => p.kind === 'link' && p.subreddit === subreddit.name && p.url === form.url);
        if (earlier !== undefined && form.resubmit !== 'true') return err('ALREADY_SUB', 'that link has already been submitted', 'url');
        const post = newPost(user, subreddit, form, 'link');
        return ok({ url: postUrl(post), drafts_count: 0, id: post.id, name: `t3_${post.id}` });
      }
      if (kind === 'image') {
        if (!subreddit.allowImages) return err('NO_IMAGES', "this subreddit doesn't allow image posts", 'sr');
        const asset = uploadFor(form.url ?? '', 'image');
        if (asset === undefined || asset.userId !== user.id) return err('BAD_URL', 'you should check that url', 'url');
        const post = newPost(user, subreddit, form, 'image');
        post.images.push({ assetId: asset.id, bytes: asset.bytes, caption: null });
        hidden.set(post.id, settings.mediaPolls);
        return ok({
          user_submitted_page: `https://www.reddit.com/user/${user.name}/submitted/`,
          websocket_url: `${url.replace(/^http/, 'ws')}/fake-ws/${asset.id}`,
        });
      }
      if (kind === 'video') {
        if (!subreddit.allowVideos) return err('NO_VIDEOS', "this subreddit doesn't allow videos", 'sr');
        const asset = uploadFor(form.url ?? '', 'video');
        if (asset === undefined || asset.userId !== user.id) return err('BAD_URL', 'you should check that url', 'url');
        const poster = uploadFor(form.video_poster_url ?? '', 'image');
        if (poster === undefined || poster.userId !== user.id) return err('NO_VIDEO_POSTER', 'a video needs a poster image', 'video_poster_url');
        const post = newPost(user, subreddit, form, 'video');
        post.video = { assetId: asset.id, bytes: asset.bytes, poster: poster.bytes };
        hidden.set(post.id, settings.mediaPolls);
        return ok({
          user_submitted_page: `https://www.reddit.com/user/${user.name}/submitted/`,
          websocket_url: `${url.replace(/^http/, 'ws')}/fake-ws/${asset.id}`,
        });
      }
      const post = newPost(user, subreddit, form, 'self');
      return ok({ url: postUrl(post), drafts_count: 0, id: post.id, name: `t3_${post.id}` });
    },
    () => {
      submitCount += 1;
    },
  );

  route(
    'POST',
    '/api/submit_gallery_post.json',
    'gallery',
    (req, body) => {
      const user = authenticate(req, 'submit');
      if (isAnswer(user)) return user;
      if (!isObject(body)) return { status: 400, body: { ...redditError(400), detail: 'a JSON body is required' } };
      const fields = {
        sr: typeof body.sr === 'string' ? body.sr : undefined,
        title: typeof body.title === 'string' ? body.title : undefined,
        flair_id: typeof body.flair_id === 'string' ? body.flair_id : undefined,
        flair_text: typeof body.flair_text === 'string' ? body.flair_text : undefined,
        nsfw: String(body.nsfw === true || body.nsfw === 'true'),
        spoiler: String(body.spoiler === true || body.spoiler === 'true'),
        sendreplies: String(body.sendreplies !== false && body.sendreplies !== 'false'),
      };
      const subreddit = checkSubmission(fields);
      if (isAnswer(subreddit)) return subreddit;
      if (subreddit.linkType === 'self') return err('NO_LINKS', 'that subreddit only allows text posts', 'sr');
      if (!subreddit.allowImages) return err('NO_IMAGES', "this subreddit doesn't allow image posts", 'sr');
      const items = Array.isArray(body.items) ? (body.items as unknown[]) : [];
      if (items.length < 2) return err('TOO_FEW_ITEMS', 'a gallery needs at least 2 items', 'items');
      if (items.length > 20) return err('TOO_MANY_ITEMS', 'a gallery takes at most 20 items', 'items');
      const images: RedditPostImage[] = [];
      for (const item of items) {
        const mediaId = isObject(item) && typeof item.media_id === 'string' ? item.media_id : '';
        const asset = assets.get(mediaId);
        if (asset === undefined || asset.userId !== user.id || asset.location === null)
          return err('MEDIA_NOT_FOUND', `media ${mediaId || '(none)'} was not uploaded`, 'items.media_id');
        const caption = isObject(item) && typeof item.caption === 'string' && item.caption !== '' ? item.caption : null;
        if (caption !== null && [...caption].length > 180) return err('TOO_LONG', 'this is too long (max: 180)', 'items.caption');
        images.push({ assetId: asset.id, bytes: asset.bytes, caption });
      }
      const post = newPost(user, subreddit, fields, 'gallery');
      post.images = images;
      return ok({ url: postUrl(post), id: `t3_${post.id}` });
    },
    () => {
      submitCount += 1;
    },
  );

  route('POST', '/api/comment', 'comment', (req, body) => {
    const user = authenticate(req, 'submit');
    if (isAnswer(user)) return user;
    const form = stringFields(body);
    const planned = rateLimited();
    if (planned !== null) return planned;
    const post = posts.find((p) => `t3_${p.id}` === form.thing_id);
    if (post === undefined) return err('NO_THING_ID', "can't find that thing", 'thing_id');
    const text = form.text ?? '';
    if (text.trim() === '') return err('NO_TEXT', 'we need something here', 'text');
    if ([...text].length > 10_000) return err('TOO_LONG', 'this is too long (max: 10000)', 'text');
    const comment: RedditComment = { id: (nextCommentId++).toString(36), author: user.name, text, createdUtc: seconds() };
    post.comments.push(comment);
    return ok({
      things: [
        {
          kind: 't1',
          data: {
            id: comment.id,
            name: `t1_${comment.id}`,
            permalink: `${permalink(post)}${comment.id}/`,
            body: text,
            author: user.name,
            link_id: `t3_${post.id}`,
            parent_id: `t3_${post.id}`,
            subreddit: post.subreddit,
            created_utc: comment.createdUtc,
          },
        },
      ],
    });
  });

  const postJson = (post: RedditPost) => {
    const image = post.kind === 'image' ? assets.get(post.images[0]?.assetId ?? '') : undefined;
    const extension = image === undefined ? 'jpg' : (image.mime.split('/')[1] ?? 'jpg').replace('jpeg', 'jpg');
    return {
      kind: 't3',
      data: {
        id: post.id,
        name: `t3_${post.id}`,
        author: post.author,
        subreddit: post.subreddit,
        subreddit_name_prefixed: `r/${post.subreddit}`,
        title: post.title,
        selftext: post.text,
        is_self: post.kind === 'self',
        is_gallery: post.kind === 'gallery',
        is_video: post.kind === 'video',
        url:
          post.kind === 'link'
            ? post.url
            : post.kind === 'image'
              ? `https://i.redd.it/${image?.id ?? post.id}.${extension}`
              : post.kind === 'video'
                ? `https://v.redd.it/${post.video?.assetId ?? post.id}`
                : post.kind === 'gallery'
                  ? `https://www.reddit.com/gallery/${post.id}`
                  : postUrl(post),
        permalink: permalink(post),
        created_utc: post.createdUtc,
        over_18: post.nsfw,
        spoiler: post.spoiler,
        link_flair_text: post.flairText,
        link_flair_template_id: post.flairId,
        num_comments: post.comments.length,
      },
    };
  };

  route('GET', ['/user/:name/submitted', '/user/:name/submitted.json', '/user/:name/submitted/'], 'listing', (req) => {
    const user = authenticate(req, 'history');
    if (isAnswer(user)) return user;
    const { name } = req.params as { name: string };
    const query = stringFields(req.query);
    const author = [...users.values()].find((u) => u.name.toLowerCase() === name.toLowerCase());
    if (author === undefined) return { status: 404, body: redditError(404) };
    const limit = Math.min(100, Math.max(1, Number(query.limit ?? 25) || 25));
    const visible: RedditPost[] = [];
    for (const post of posts) {
      if (post.author !== author.name) continue;
      const waits = hidden.get(post.id) ?? 0;
      if (waits > 0) hidden.set(post.id, waits - 1);
      else visible.push(post);
    }
    visible.reverse(); // newest first (sort=new; other sorts are answered the same)
    let from = 0;
    if (query.after !== undefined && query.after !== '') {
      const at = visible.findIndex((p) => `t3_${p.id}` === query.after);
      from = at === -1 ? visible.length : at + 1;
    }
    const page = visible.slice(from, from + limit);
    const last = page.at(-1);
    const after = from + limit < visible.length && last !== undefined ? `t3_${last.id}` : null;
    return {
      status: 200,
      body: { kind: 'Listing', data: { after, before: null, dist: page.length, modhash: null, children: page.map(postJson) } },
    };
  });

  // --- Media -----------------------------------------------------------------------------------

  route('POST', '/api/media/asset.json', 'media', (req, body) => {
    const user = authenticate(req, 'submit');
    if (isAnswer(user)) return user;
    const form = stringFields(body);
    if (form.filepath === undefined || form.mimetype === undefined)
      return { status: 400, body: { ...redditError(400), detail: 'filepath and mimetype are required' } };
    const id = (nextAssetId++).toString(36);
    const key = `${id}/${form.filepath.replace(/[^A-Za-z0-9._-]+/g, '_')}`;
    const t = new Date(now());
    const day = t.toISOString().slice(0, 10).replaceAll('-', '');
    const policy = Buffer.from(
      JSON.stringify({
        expiration: new Date(t.getTime() + 3_600_000).toISOString(),
        conditions: [{ bucket: BUCKET }, { key }, { 'Content-Type': form.mimetype }, ['content-length-range', 0, maxBytesOf(form.mimetype)]],
      }),
    ).toString('base64');
    const fields: Record<string, string> = {
      acl: 'public-read',
      key,
      'X-Amz-Credential': `ASIAFAKE${randomBytes(6).toString('hex').toUpperCase()}/${day}/us-east-1/s3/aws4_request`,
      'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
      'X-Amz-Date': `${day}T${t.toISOString().slice(11, 19).replaceAll(':', '')}Z`,
      success_action_status: '201',
      'content-type': form.mimetype,
      'x-amz-storage-class': 'STANDARD',
      'x-amz-meta-ext': form.filepath.split('.').pop() ?? '',
      policy,
      'X-Amz-Signature': randomBytes(32).toString('hex'),
      'x-amz-security-token': randomBytes(48).toString('base64'),
    };
    assets.set(id, { id, userId: user.id, filepath: form.filepath, mime: form.mimetype, key, fields, bytes: Buffer.alloc(0), location: null });
    return {
      status: 200,
      body: {
        args: { action: uploadAction, fields: Object.entries(fields).map(([name, value]) => ({ name, value })) },
        asset: {
          asset_id: id,
          processing_state: 'incomplete',
          payload: { filepath: form.filepath },
          websocket_url: `${url.replace(/^http/, 'ws')}/fake-ws/${id}`,
        },
      },
    };
  });

  route('POST', UPLOAD_PATH, 'upload', (_req, body) => {
    const s3Error = (status: number, code: string, message: string, extra: Record<string, string> = {}): Answer => ({
      status,
      headers: { 'content-type': 'application/xml' },
      body: s3Xml('Error', { Code: code, Message: message, ...extra, RequestId: randomBytes(8).toString('hex').toUpperCase() }),
    });
    if (!(body instanceof MultipartBody)) return s3Error(412, 'PreconditionFailed', 'Bucket POST must be of the enclosure-type multipart/form-data');
    const before = body.fieldsBeforeFile();
    const key = before.key;
    if (key === undefined)
      return s3Error(400, 'InvalidArgument', "Bucket POST must contain a field named 'key'.  If it is specified, please check the order of the fields.");
    const asset = [...assets.values()].find((a) => a.key === key);
    if (asset === undefined) return s3Error(403, 'AccessDenied', 'Invalid according to Policy: Policy Condition failed: ["eq", "$key", ...]');
    for (const [name, value] of Object.entries(asset.fields)) {
      const sent = Object.entries(before).find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1];
      if (sent === undefined)
        return s3Error(403, 'AccessDenied', `Invalid according to Policy: Policy Condition failed: missing field ${name} (before the file)`);
      if (sent !== value) return s3Error(403, 'AccessDenied', `Invalid according to Policy: Policy Condition failed: ["eq", "$${name}", ...]`);
    }
    const file = body.files.file;
    if (file === undefined) return s3Error(400, 'InvalidArgument', "POST requires exactly one file upload per request (a part named 'file').");
    if (file.bytes.length > maxBytesOf(asset.mime))
      return s3Error(400, 'EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size', {
        ProposedSize: String(file.bytes.length),
        MaxSizeAllowed: String(maxBytesOf(asset.mime)),
      });
    asset.bytes = file.bytes;
    asset.location = `${BUCKET_URL}/${key}`;
    if (before.success_action_status !== '201') return { status: 204 };
    return {
      status: 201,
      headers: { 'content-type': 'application/xml', location: asset.location },
      body: s3Xml('PostResponse', {
        Location: asset.location,
        Bucket: BUCKET,
        Key: key,
        ETag: `"${createHash('md5').update(file.bytes).digest('hex')}"`,
      }),
    };
  });

  const url = await listenLocal(app);
  const uploadAction = `${url.replace(/^http:/, '')}${UPLOAD_PATH}`;

  const knownUser = (user: { id: string }) => {
    const found = users.get(user.id);
    if (found === undefined) throw new Error(`no user ${user.id}`);
    return found;
  };

  const fake: Omit<RedditFake, 'mediaPolls'> = {
    ...fakeControls(app, state, consent),
    url,
    clientId,
    clientSecret,
    addUser({ name, iconImg }) {
      const user: RedditUser = {
        id: (nextUserId++).toString(36),
        name,
        iconImg: iconImg ?? 'https://www.redditstatic.com/avatars/defaults/v2/avatar_default_1.png',
      };
      users.set(user.id, user);
      return { id: user.id, name };
    },
    addSubreddit(name, rules = {}) {
      const subreddit: RedditSubreddit = {
        name,
        linkType: rules.linkType ?? 'any',
        flairRequired: rules.flairRequired ?? false,
        allowImages: rules.allowImages ?? true,
        allowVideos: rules.allowVideos ?? true,
      };
      subreddits.push(subreddit);
      return { ...subreddit };
    },
    consentAs(user) {
      consent.consentAs(knownUser(user).id);
    },
    grant(user, scopes = HERALD_SCOPES) {
      const issued = issueTokens(knownUser(user).id, [...scopes], true);
      return { accessToken: issued.accessToken, refreshToken: issued.refreshToken ?? '' };
    },
    refreshes: () => refreshCount,
    submitCalls: () => submitCount,
    rateLimitNext(minutes) {
      rateLimits.push(minutes);
    },
    authorizations: consent.authorizations,
    revocations,
    posts,
    subreddits,
    assets,
  };
  return withSettings(fake, settings, ['mediaPolls']);
}

/** The consent's scopes: Reddit takes them space-, comma- or plus-separated. */
function scopeOf(query: Record<string, string>): string[] {
  return (query.scope ?? '').split(/[\s,+]+/).filter((s) => s !== '');
}

function s3Xml(root: string, fields: Record<string, string>): string {
  const inner = Object.entries(fields)
    .map(([name, value]) => `<${name}>${escapeXml(value)}</${name}>`)
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<${root}>${inner}</${root}>`;
}
