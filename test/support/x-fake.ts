import { createHash, randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import {
  base62,
  basicClientMatches,
  bearerToken,
  CodeStore,
  createFakeApp,
  createFakeState,
  fakeControls,
  fakeRoute,
  installConsentPage,
  isAnswer,
  isObject,
  listenLocal,
  MultipartBody,
  plannedAnswer,
  stringFields,
  withSettings,
  type Answer,
  type Authorization,
  type Fake,
  type FakeOptions,
  type Fault,
  type HintedRevocation,
  type RecordedRequest,
} from './fake-kit.js';

/**
 * An in-process X (API v2), written from its documentation, for the calls Herald makes. `url` stands
 * for both https://x.com (the consent page) and https://api.x.com (everything else): same paths.
 * - docs.x.com/resources/fundamentals/authentication/oauth-2-0/user-access-token: GET /i/oauth2/authorize
 *   (response_type=code, client_id, redirect_uri, scope, state, code_challenge, code_challenge_method),
 *   back to redirect_uri with `state` and `code` (or `error=access_denied`); POST /2/oauth2/token (form,
 *   confidential client: `Authorization: Basic base64(client_id:client_secret)`, compared byte for byte
 *   with the id and secret as registered, not form-encoded), grants
 *   authorization_code (code, redirect_uri, code_verifier) and refresh_token; POST /2/oauth2/revoke (token,
 *   token_type_hint) answers `{"revoked":true}`;
 * - docs.x.com/resources/fundamentals/authentication/oauth-2-0/authorization-code: the code is valid 30 s,
 *   the access token 2 hours, a refresh token comes only with `offline.access`;
 * - X API v2 OpenAPI 2.167 (xdevplatform/docs openapi.json): GET /2/users/me; POST /2/tweets (CreatePostsRequest,
 *   additionalProperties false; media_ids 1–4; 201 `{data:{id,text,edit_history_post_ids}}`); POST /2/media/upload
 *   (multipart, `media_category` required), /2/media/upload/initialize, /{id}/append (segment_index 0–999),
 *   /{id}/finalize, GET /2/media/upload?command=STATUS (processing_info pending|in_progress|succeeded|failed,
 *   error {code,name,message}); POST /2/media/metadata (alt text ≤1000); GET /2/users/{id}/tweets
 *   (start_time, end_time, max_results 5–100, pagination_token, tweet.fields, exclude);
 * - docs.x.com/x-api/fundamentals/rate-limits: x-rate-limit-limit, -remaining, -reset (epoch seconds) per
 *   user and 15 minutes: POST /2/tweets 100, GET /2/users/me 75, simple upload 500, chunked upload 1,875;
 * - docs.x.com/x-api/fundamentals/response-codes-and-errors: `{title, detail, type, status}` problems, 401
 *   Unauthorized, 400 `https://api.x.com/2/problems/invalid-request`;
 * - docs.x.com/resources/fundamentals/counting-characters: 280 weighted characters (twitter-text config v3:
 *   code points U+0000–U+10FF, U+2000–U+200D, U+2010–U+201F, U+2032–U+2037 weigh 1, others 2, an emoji
 *   sequence 2, NFC first, any URL 23);
 * - docs.x.com/x-api/posts/manage-tweets/integrate: on self-serve tiers a reply is allowed only when the
 *   parent's author mentioned the replier (403 otherwise);
 * - docs.x.com/x-api/media/quickstart/best-practices: 1–4 images, or 1 GIF, or 1 video; image ≤5 MB,
 *   GIF ≤15 MB, video ≤512 MB.
 * Seen in the wild, not documented (so the fake's word only): the duplicate-content 403 body
 * (akrherz/iembot#163), a reused refresh token refused with 400 invalid_request (gptme/gptme-contrib#285),
 * 401 "Missing valid authorization header" without Basic auth (PLhery/node-twitter-api-v2#319), 402
 * CreditsDepleted (tryethernal/ethernal#1326), the `x-user-limit-24hour-*` headers on POST /2/tweets, and
 * text read back with every URL (and a post's media) as a t.co link.
 * Choices of the fake: the duplicate check compares with all of the user's earlier posts (X's window is
 * undocumented); video processing moves only when polled (`videoPolls` in_progress answers, then succeeded or
 * the planned failure); a refresh leaves earlier access tokens valid until they expire.
 * Faults a test plans are taken by the next matching request, in order. No timers: the clock is read on demand.
 */

export interface XUser {
  /** Numeric, as a string. */
  id: string;
  username: string;
  name: string;
}

export interface XPost {
  id: string;
  authorId: string;
  /** As sent. */
  text: string;
  /** As X shows it: URLs (and, when there is media, a link to it) as t.co links. */
  shownText: string;
  mediaIds: string[];
  /** Alt text of each attached media that had one when posting, by media id. */
  altTexts: Record<string, string>;
  inReplyToId: string | null;
  replySettings: string | null;
  /** By the fake's clock, to the second (ISO 8601, as X shows `created_at`). */
  createdAt: string;
}

export interface XMedia {
  id: string;
  mediaKey: string;
  userId: string;
  kind: 'image' | 'gif' | 'video';
  category: string;
  mediaType: string | null;
  bytes: Buffer;
  /** Announced by initialize; the file's size for a simple upload. */
  totalBytes: number;
  /** Segments appended so far (chunked uploads). */
  segments: number;
  state: 'uploading' | 'pending' | 'in_progress' | 'succeeded' | 'failed';
  /** STATUS polls left to answer in_progress. */
  pollsLeft: number;
  /** The processing error this media is to end with, when a test planned one. */
  failure: string | null;
  altText: string | null;
  /** By the fake's clock, in ms; media expires 86,400 s later. */
  uploadedAt: number;
}

export type XAuthorization = Authorization;

/** X answers `revoked: true` for an unknown token all the same. */
export type XRevocation = HintedRevocation;

export type XRecordedRequest = RecordedRequest;

/** tweets: POST /2/tweets; media: every /2/media/* call (STATUS polls too); token: POST /2/oauth2/token;
 * revoke: POST /2/oauth2/revoke; users: GET /2/users/me; timeline: GET /2/users/{id}/tweets. */
export type XFaultTarget = 'tweets' | 'media' | 'token' | 'revoke' | 'users' | 'timeline';

/** An `answer`'s body defaults to X's for 401, 402, 429 and 503; a 429 says remaining 0. */
export type XFault = Fault;

export interface XFakeOptions extends FakeOptions {
  clientId?: string;
  /** STATUS polls that answer in_progress before a video's processing ends; 2 by default. */
  videoPolls?: number;
}

export interface XFake extends Fake<XUser, XFaultTarget> {
  /** Stands for https://x.com and https://api.x.com alike. */
  url: string;
  clientId: string;
  addUser(user: { username: string; name?: string }): XUser;
  /** Tokens as a completed consent would give them, without the round trip. */
  grant(user: XUser, scope?: string): { accessToken: string; refreshToken: string };
  /** The user removes the app from their X settings: their access and refresh tokens stop working. */
  revokeApp(user: XUser): void;
  authorizations: XAuthorization[];
  revocations: XRevocation[];
  /** Posts in creation order. */
  posts: XPost[];
  media: Map<string, XMedia>;
  /** STATUS polls answered in_progress for videos finalized from now on. */
  videoPolls: number;
  /** The next video finalized ends its processing `failed` (InvalidMedia) with this message. */
  failNextVideo(message?: string): void;
}

const SCOPES_NEEDED = ['tweet.read', 'tweet.write', 'users.read', 'media.write', 'offline.access'];
const CODE_TTL_MS = 30_000;
const ACCESS_TTL_S = 7_200;
const MEDIA_TTL_S = 86_400;
const WINDOW_MS = 15 * 60_000;
const DAY_MS = 86_400_000;
/** Per user and 15 minutes (docs.x.com/x-api/fundamentals/rate-limits); the OAuth endpoints' figure is the fake's. */
const LIMITS = { oauth: 1_000, me: 75, tweets: 100, timeline: 900, upload: 500, chunked: 1_875, metadata: 500 } as const;
/** `x-user-limit-24hour-limit` on POST /2/tweets: undocumented; the fake's figure. */
const TWEETS_PER_DAY = 2_400;
const MAX_WEIGHTED_LENGTH = 280;
const MAX_ALT_TEXT = 1_000;
const T_CO_LENGTH = 23;
const MB = 1024 * 1024;
const CATEGORIES = ['tweet_image', 'tweet_gif', 'tweet_video', 'amplify_video', 'dm_image', 'dm_gif', 'dm_video', 'subtitles'];
const MEDIA_TYPES = [
  'video/mp4',
  'video/webm',
  'video/mp2t',
  'video/quicktime',
  'image/jpeg',
  'image/gif',
  'image/bmp',
  'image/png',
  'image/webp',
  'image/pjpeg',
  'image/tiff',
  'text/srt',
  'text/vtt',
];
const REPLY_SETTINGS = ['following', 'mentionedUsers', 'subscribers', 'verified'];

const UNAUTHORIZED = { title: 'Unauthorized', type: 'about:blank', status: 401, detail: 'Unauthorized' };
const FORBIDDEN = { title: 'Forbidden', type: 'about:blank', status: 403, detail: 'Forbidden' };
const DUPLICATE = { detail: 'You are not allowed to create a Tweet with duplicate content.', type: 'about:blank', title: 'Forbidden', status: 403 };
const NOT_SUMMONED = {
  detail: 'Reply to this conversation is not allowed because you have not been mentioned or otherwise engaged by the author of the post you are replying to.',
  type: 'about:blank',
  title: 'Forbidden',
  status: 403,
};
const FAULT_BODIES: Record<number, unknown> = {
  401: UNAUTHORIZED,
  402: {
    title: 'CreditsDepleted',
    detail: 'Your enrolled account [...] does not have any credits to fulfill this request.',
    type: 'https://api.x.com/2/problems/credits',
    status: 402,
  },
  429: { title: 'Too Many Requests', detail: 'Too Many Requests', type: 'about:blank', status: 429 },
  503: { title: 'Service Unavailable', detail: 'Service Unavailable', type: 'about:blank', status: 503 },
};
const CLIENT_UNAUTHORIZED = { error: 'unauthorized_client', error_description: 'Missing valid authorization header' };
const BAD_TOKEN = { error: 'invalid_request', error_description: 'Value passed for the token was invalid.' };

interface Code {
  userId: string;
  redirectUri: string;
  challenge: string;
  scope: string[];
}

type Limit = keyof typeof LIMITS;

export async function startXFake(options: XFakeOptions = {}): Promise<XFake> {
  // With `-`, `_`, `.` and `~`, which a form-encoding client would send as `%2D`, `%5F`, `.` and `~`.
  const clientId = options.clientId ?? `${randomBytes(24).toString('base64url')}-_.~`;
  const clientSecret = options.clientSecret ?? `${randomBytes(36).toString('base64url')}~._-`;
  const state = createFakeState<XFaultTarget>(options.now);
  const { now, recorder, tokens } = state;

  const users = new Map<string, XUser>();
  const posts: XPost[] = [];
  const media = new Map<string, XMedia>();
  const revocations: XRevocation[] = [];
  const codes = new CodeStore<Code>(now, CODE_TTL_MS);
  const windows = new Map<string, { start: number; count: number }>();
  const tCo = new Map<string, string>();
  const plannedVideoFailures: string[] = [];
  let refreshCount = 0;
  const settings = { videoPolls: options.videoPolls ?? 2 };
  let nextUserId = 1_500_000_001;
  let nextSnowflake = 1_900_000_000_000_000_001n;

  const app = await createFakeApp({
    bodyLimit: 64 * MB,
    multipartFileSize: 64 * MB,
    // X takes a finalize with no body; a client may still label it JSON.
    jsonError: 'Request body is not valid JSON.',
    errorBody: (status, message) => (status < 500 ? invalidRequest(message) : { title: 'Internal Server Error', detail: message, type: 'about:blank', status }),
    notFoundBody: () => ({ errors: [{ message: 'Sorry, that page does not exist', code: 34 }] }),
  });

  const snowflake = () => String(nextSnowflake++);
  const isoSecond = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString();

  /** Counts a request in its window; the answer's rate-limit headers, and whether it is over. */
  const count = (key: string, limit: number, spanMs: number) => {
    const t = now();
    let window = windows.get(key);
    if (window === undefined || t - window.start >= spanMs) {
      window = { start: t, count: 0 };
      windows.set(key, window);
    }
    window.count += 1;
    return { limit, remaining: Math.max(0, limit - window.count), reset: Math.ceil((window.start + spanMs) / 1000), over: window.count > limit };
  };

  /** The caller's user, or the answer to give instead. */
  const authenticate = (req: FastifyRequest, scopes: string[]): XUser | Answer => {
    const grant = tokens.bearer(req);
    const user = grant === undefined ? undefined : users.get(grant.subject);
    if (grant === undefined || user === undefined) return { status: 401, body: UNAUTHORIZED };
    if (!scopes.every((s) => grant.scope.includes(s))) return { status: 403, body: FORBIDDEN };
    return user;
  };

  const issueTokens = (userId: string, scope: string[]) => {
    const accessToken = tokens.issue('access', randomBytes(48).toString('base64url'), { subject: userId, scope, ttlMs: ACCESS_TTL_S * 1000 }).token;
    const refreshToken = scope.includes('offline.access')
      ? tokens.issue('refresh', randomBytes(48).toString('base64url'), { subject: userId, scope }).token
      : undefined;
    return { accessToken, refreshToken };
  };

  const tokenAnswer = (issued: { accessToken: string; refreshToken: string | undefined }, scope: string[]): Answer => ({
    status: 200,
    body: {
      token_type: 'bearer',
      expires_in: ACCESS_TTL_S,
      access_token: issued.accessToken,
      scope: scope.join(' '),
      ...(issued.refreshToken === undefined ? {} : { refresh_token: issued.refreshToken }),
    },
  });

  const link = (url: string) => {
    let short = tCo.get(url);
    if (short === undefined) {
      short = `https://t.co/${base62(10)}`;
      tCo.set(url, short);
    }
    return short;
  };

  /**
   * Every API route: the request recorded, counted against its rate limit, a planned fault taken,
   * then the handler; the rate-limit headers on whatever answer goes out.
   */
  const api = (
    method: 'GET' | 'POST',
    url: string,
    target: XFaultTarget,
    limit: Limit,
    handler: (req: FastifyRequest, body: unknown) => Answer | Promise<Answer>,
  ) =>
    fakeRoute(app, state, {
      method,
      url,
      target,
      admit: (req) => {
        // Any access token X issued counts against its user's window, live or not.
        const sent = tokens.tokens.get(bearerToken(req) ?? '');
        const subject = target === 'token' || target === 'revoke' ? 'app' : sent?.kind === 'access' ? sent.subject : 'anonymous';
        const window = count(`${limit}:${subject}`, LIMITS[limit], WINDOW_MS);
        const headers: Record<string, string> = {
          'x-rate-limit-limit': String(window.limit),
          'x-rate-limit-remaining': String(window.remaining),
          'x-rate-limit-reset': String(window.reset),
        };
        let over = window.over;
        if (target === 'tweets') {
          const day = count(`tweets-day:${subject}`, TWEETS_PER_DAY, DAY_MS);
          Object.assign(headers, {
            'x-user-limit-24hour-limit': String(day.limit),
            'x-user-limit-24hour-remaining': String(day.remaining),
            'x-user-limit-24hour-reset': String(day.reset),
          });
          over ||= day.over;
        }
        return { headers, refusal: over ? { status: 429, body: FAULT_BODIES[429] } : null };
      },
      faultAnswer: (fault) =>
        plannedAnswer(
          fault,
          (status) => FAULT_BODIES[status] ?? { title: 'Error', detail: 'Error', type: 'about:blank', status },
          fault.status === 429 ? { 'x-rate-limit-remaining': '0' } : {},
        ),
      handle: handler,
    });

  // --- OAuth 2.0 -------------------------------------------------------------------------------

  const consent = installConsentPage({
    app,
    path: '/i/oauth2/authorize',
    recorder,
    who: 'userId',
    firstSubject: () => users.keys().next().value,
    check: (query) => {
      const scope = (query.scope ?? '').split(/[ +]/).filter((s) => s !== '');
      const missing = SCOPES_NEEDED.filter((s) => !scope.includes(s));
      return query.response_type !== 'code'
        ? 'response_type must be code'
        : query.client_id !== clientId
          ? 'unknown client_id'
          : query.redirect_uri === undefined || !/^https?:\/\//.test(query.redirect_uri)
            ? 'redirect_uri missing or not an http(s) URL'
            : query.state === undefined || query.state === '' || query.state.length > 500
              ? 'state missing or longer than 500 characters'
              : query.code_challenge_method !== 'S256'
                ? 'code_challenge_method must be S256'
                : !/^[A-Za-z0-9_-]{43}$/.test(query.code_challenge ?? '')
                  ? 'code_challenge is not a base64url SHA-256'
                  : missing.length > 0
                    ? `scope lacks ${missing.join(' ')}`
                    : null;
    },
    errorPage: (reason) => `<p>Something went wrong. You weren't able to give access to the App. Go back and try logging in again.</p><!-- ${reason} -->`,
    nobody: { reason: 'no user to consent as (addUser first)', page: '<p>No user is signed in to the fake (call addUser).</p>' },
    refused: (query) => ({ error: 'access_denied', state: query.state! }),
    approved: (query, userId) => {
      const code = randomBytes(40).toString('base64url');
      const scope = (query.scope ?? '').split(/[ +]/).filter((s) => s !== '');
      codes.issue(code, { userId, redirectUri: query.redirect_uri!, challenge: query.code_challenge!, scope });
      return { state: query.state!, code };
    },
  });

  api('POST', '/2/oauth2/token', 'token', 'oauth', (req, body) => {
    if (!basicClientMatches(req, clientId, clientSecret)) return { status: 401, body: CLIENT_UNAUTHORIZED };
    const form = stringFields(body);
    if (form.grant_type === 'authorization_code') {
      const code = codes.redeem(form.code);
      if (code === undefined)
        return { status: 400, body: { error: 'invalid_request', error_description: 'Value passed for the authorization code was invalid.' } };
      if (form.redirect_uri !== code.redirectUri)
        return {
          status: 400,
          body: { error: 'invalid_request', error_description: 'Value passed for the redirect uri did not match the uri of the authorization code.' },
        };
      if (form.code_verifier === undefined || createHash('sha256').update(form.code_verifier).digest('base64url') !== code.challenge) {
        return { status: 400, body: { error: 'invalid_request', error_description: 'Value passed for the code verifier did not match the code challenge.' } };
      }
      return tokenAnswer(issueTokens(code.userId, code.scope), code.scope);
    }
    if (form.grant_type === 'refresh_token') {
      const old = tokens.live('refresh', form.refresh_token);
      if (old === undefined) return { status: 400, body: BAD_TOKEN };
      old.dead = true;
      refreshCount += 1;
      return tokenAnswer(issueTokens(old.subject, old.scope), old.scope);
    }
    return { status: 400, body: { error: 'unsupported_grant_type', error_description: 'grant_type must be authorization_code or refresh_token.' } };
  });

  api('POST', '/2/oauth2/revoke', 'revoke', 'oauth', (req, body) => {
    if (!basicClientMatches(req, clientId, clientSecret)) return { status: 401, body: CLIENT_UNAUTHORIZED };
    const form = stringFields(body);
    if (form.token === undefined) return { status: 400, body: { error: 'invalid_request', error_description: 'Missing required parameter [token].' } };
    revocations.push({ token: form.token, tokenTypeHint: form.token_type_hint ?? null, kind: tokens.revoke(form.token) });
    return { status: 200, body: { revoked: true } };
  });

  // --- Users -----------------------------------------------------------------------------------

  api('GET', '/2/users/me', 'users', 'me', (req) => {
    const user = authenticate(req, ['tweet.read', 'users.read']);
    if (isAnswer(user)) return user;
    return { status: 200, body: { data: { id: user.id, name: user.name, username: user.username } } };
  });

  // --- Media -----------------------------------------------------------------------------------

  const ownMedia = (user: XUser, id: string | undefined): XMedia | Answer => {
    const m = id === undefined ? undefined : media.get(id);
    if (m === undefined || m.userId !== user.id) return { status: 400, body: invalidRequest(`Media id [${id ?? ''}] is not valid for this user.`) };
    if (now() - m.uploadedAt >= MEDIA_TTL_S * 1000) return { status: 400, body: invalidRequest(`Media id [${m.id}] has expired.`) };
    return m;
  };

  const newMedia = (user: XUser, fields: Pick<XMedia, 'kind' | 'category' | 'mediaType' | 'bytes' | 'totalBytes' | 'state'>): XMedia => {
    const id = snowflake();
    const prefix = fields.kind === 'video' ? 7 : fields.kind === 'gif' ? 16 : 3;
    const m: XMedia = {
      id,
      mediaKey: `${prefix}_${id}`,
      userId: user.id,
      segments: 0,
      pollsLeft: 0,
      failure: null,
      altText: null,
      uploadedAt: now(),
      ...fields,
    };
    media.set(id, m);
    return m;
  };

  api('POST', '/2/media/upload', 'media', 'upload', (req, body) => {
    const user = authenticate(req, ['media.write']);
    if (isAnswer(user)) return user;
    if (!(body instanceof MultipartBody)) return { status: 400, body: invalidRequest('The request must be multipart/form-data.') };
    const category = body.fields.media_category;
    if (category === undefined || category === '') return { status: 400, body: invalidRequest('The `media_category` field can not be empty.') };
    if (!CATEGORIES.includes(category))
      return { status: 400, body: invalidRequest(`The \`media_category\` value [${category}] is not one of [${CATEGORIES.join(',')}].`) };
    if (category.endsWith('video'))
      return { status: 400, body: invalidRequest('Video must be uploaded with /2/media/upload/initialize, append and finalize.') };
    const file = body.files.media;
    if (file === undefined || file.bytes.length === 0) return { status: 400, body: invalidRequest('The `media` field can not be empty.') };
    const kind = category.endsWith('gif') ? 'gif' : 'image';
    const max = kind === 'gif' ? 15 * MB : 5 * MB;
    if (file.bytes.length > max) return { status: 400, body: invalidRequest(`File size exceeds ${max} bytes.`) };
    const m = newMedia(user, {
      kind,
      category,
      mediaType: body.fields.media_type ?? (file.mime === 'application/octet-stream' ? null : file.mime),
      bytes: file.bytes,
      totalBytes: file.bytes.length,
      state: 'succeeded',
    });
    return { status: 200, body: { data: { id: m.id, media_key: m.mediaKey, size: m.bytes.length, expires_after_secs: MEDIA_TTL_S } } };
  });

  api('POST', '/2/media/upload/initialize', 'media', 'chunked', (req, body) => {
    const user = authenticate(req, ['media.write']);
    if (isAnswer(user)) return user;
    if (!isObject(body)) return { status: 400, body: invalidRequest('The request body must be a JSON object.') };
    const { media_type: mediaType, total_bytes: totalBytes, media_category: givenCategory } = body;
    if (typeof mediaType !== 'string' || !MEDIA_TYPES.includes(mediaType))
      return { status: 400, body: invalidRequest(`The \`media_type\` value [${String(mediaType)}] is not one of [${MEDIA_TYPES.join(',')}].`) };
    if (typeof totalBytes !== 'number' || !Number.isInteger(totalBytes) || totalBytes <= 0)
      return { status: 400, body: invalidRequest('The `total_bytes` field must be a positive integer.') };
    if (givenCategory !== undefined && (typeof givenCategory !== 'string' || !CATEGORIES.includes(givenCategory)))
      return { status: 400, body: invalidRequest(`The \`media_category\` value [${JSON.stringify(givenCategory)}] is not one of [${CATEGORIES.join(',')}].`) };
    const category = givenCategory ?? (mediaType.startsWith('video/') ? 'tweet_video' : mediaType === 'image/gif' ? 'tweet_gif' : 'tweet_image');
    const kind = category.endsWith('video') || mediaType.startsWith('video/') ? 'video' : category.endsWith('gif') ? 'gif' : 'image';
    const max = kind === 'video' ? 512 * MB : kind === 'gif' ? 15 * MB : 5 * MB;
    if (totalBytes > max) return { status: 400, body: invalidRequest(`total_bytes exceeds ${max} bytes for ${category}.`) };
    const m = newMedia(user, { kind, category, mediaType, bytes: Buffer.alloc(0), totalBytes, state: 'uploading' });
    return { status: 200, body: { data: { id: m.id, media_key: m.mediaKey, expires_after_secs: MEDIA_TTL_S } } };
  });

  api('POST', '/2/media/upload/:id/append', 'media', 'chunked', (req, body) => {
    const user = authenticate(req, ['media.write']);
    if (isAnswer(user)) return user;
    const m = ownMedia(user, (req.params as { id: string }).id);
    if (isAnswer(m)) return m;
    if (m.state !== 'uploading') return { status: 400, body: invalidRequest(`Media id [${m.id}] is already finalized.`) };
    if (!(body instanceof MultipartBody)) return { status: 400, body: invalidRequest('The request must be multipart/form-data.') };
    const index = Number(body.fields.segment_index ?? Number.NaN);
    if (!Number.isInteger(index) || index < 0 || index > 999)
      return { status: 400, body: invalidRequest('The `segment_index` field must be an integer from 0 to 999.') };
    if (index !== m.segments) return { status: 400, body: invalidRequest(`Segment index ${index} is out of order: expected ${m.segments}.`) };
    const chunk = body.files.media;
    if (chunk === undefined || chunk.bytes.length === 0) return { status: 400, body: invalidRequest('The `media` field can not be empty.') };
    m.bytes = Buffer.concat([m.bytes, chunk.bytes]);
    m.segments += 1;
    return { status: 200, body: { data: { expires_at: Math.floor(m.uploadedAt / 1000) + MEDIA_TTL_S } } };
  });

  api('POST', '/2/media/upload/:id/finalize', 'media', 'chunked', (req) => {
    const user = authenticate(req, ['media.write']);
    if (isAnswer(user)) return user;
    const m = ownMedia(user, (req.params as { id: string }).id);
    if (isAnswer(m)) return m;
    if (m.state !== 'uploading') return { status: 400, body: invalidRequest(`Media id [${m.id}] is already finalized.`) };
    if (m.bytes.length !== m.totalBytes)
      return { status: 400, body: invalidRequest(`File size mismatch: ${m.bytes.length} bytes appended, total_bytes is ${m.totalBytes}.`) };
    const data = { id: m.id, media_key: m.mediaKey, size: m.bytes.length, expires_after_secs: MEDIA_TTL_S };
    if (m.kind === 'image') {
      m.state = 'succeeded';
      return { status: 200, body: { data } };
    }
    m.state = 'pending';
    m.pollsLeft = settings.videoPolls;
    m.failure = plannedVideoFailures.shift() ?? null;
    return { status: 200, body: { data: { ...data, processing_info: { state: 'pending', check_after_secs: 1 } } } };
  });

  api('GET', '/2/media/upload', 'media', 'chunked', (req) => {
    const user = authenticate(req, ['media.write']);
    if (isAnswer(user)) return user;
    const query = req.query as Record<string, unknown>;
    if (query.command !== 'STATUS') return { status: 400, body: invalidRequest('The `command` query parameter must be STATUS.') };
    const m = ownMedia(user, typeof query.media_id === 'string' ? query.media_id : undefined);
    if (isAnswer(m)) return m;
    if (m.state === 'uploading') return { status: 400, body: invalidRequest(`Media id [${m.id}] is not finalized.`) };
    if (m.state === 'pending' || m.state === 'in_progress') {
      if (m.pollsLeft > 0) {
        m.pollsLeft -= 1;
        m.state = 'in_progress';
      } else {
        m.state = m.failure === null ? 'succeeded' : 'failed';
      }
    }
    const total = settings.videoPolls + 1;
    const info =
      m.state === 'in_progress'
        ? { state: 'in_progress', check_after_secs: 1, progress_percent: Math.round((100 * (total - m.pollsLeft - 1)) / total) }
        : m.state === 'failed'
          ? { state: 'failed', progress_percent: 100, error: { code: 1, name: 'InvalidMedia', message: m.failure } }
          : { state: m.state, progress_percent: 100 };
    return { status: 200, body: { data: { id: m.id, media_key: m.mediaKey, processing_info: info } } };
  });

  api('POST', '/2/media/metadata', 'media', 'metadata', (req, body) => {
    const user = authenticate(req, ['media.write']);
    if (isAnswer(user)) return user;
    const metadata = isObject(body) ? body.metadata : undefined;
    const altText = isObject(metadata) ? metadata.alt_text : undefined;
    const text = isObject(altText) ? altText.text : undefined;
    if (!isObject(body) || typeof body.id !== 'string' || typeof text !== 'string')
      return { status: 400, body: invalidRequest('The body must be {"id": string, "metadata": {"alt_text": {"text": string}}}.') };
    if ([...text].length > MAX_ALT_TEXT) return { status: 400, body: invalidRequest(`Alt text is longer than ${MAX_ALT_TEXT} characters.`) };
    const m = ownMedia(user, body.id);
    if (isAnswer(m)) return m;
    m.altText = text;
    return { status: 200, body: { data: { id: m.id, associated_metadata: { alt_text: { text } } } } };
  });

  // --- Posts -----------------------------------------------------------------------------------

  api('POST', '/2/tweets', 'tweets', 'tweets', (req, body) => {
    const user = authenticate(req, ['tweet.read', 'tweet.write', 'users.read']);
    if (isAnswer(user)) return user;
    const bad = (message: string): Answer => ({ status: 400, body: invalidRequest(message) });
    if (!isObject(body)) return bad('The request body must be a JSON object.');
    const unknown =
      unknownKey(body, ['text', 'media', 'reply', 'reply_settings']) ??
      (isObject(body.media) ? unknownKey(body.media, ['media_ids'], 'media.') : undefined) ??
      (isObject(body.reply) ? unknownKey(body.reply, ['in_reply_to_tweet_id'], 'reply.') : undefined);
    if (unknown !== undefined) return bad(`$.${unknown}: is not defined in the schema and the schema does not allow additional properties`);
    const { text = '', media: attached, reply, reply_settings: replySettings } = body;
    if (typeof text !== 'string') return bad('$.text: string expected');
    if (replySettings !== undefined && (typeof replySettings !== 'string' || !REPLY_SETTINGS.includes(replySettings)))
      return bad(`$.reply_settings: does not have a value in the enumeration [${REPLY_SETTINGS.join(', ')}]`);
    let mediaIds: string[] = [];
    if (attached !== undefined) {
      const ids = isObject(attached) ? attached.media_ids : undefined;
      if (!Array.isArray(ids) || ids.length < 1 || ids.length > 4 || !ids.every((id) => typeof id === 'string' && /^[0-9]{1,19}$/.test(id)))
        return bad('$.media.media_ids: 1 to 4 numeric strings expected');
      mediaIds = ids as string[];
    }
    let inReplyToId: string | null = null;
    if (reply !== undefined) {
      const parentId = isObject(reply) ? reply.in_reply_to_tweet_id : undefined;
      if (typeof parentId !== 'string' || !/^[0-9]{1,19}$/.test(parentId)) return bad('$.reply.in_reply_to_tweet_id: numeric string expected');
      inReplyToId = parentId;
    }
    if (text === '' && mediaIds.length === 0) return bad('Text is required when there is no media.');
    const length = weightedLength(text);
    if (length > MAX_WEIGHTED_LENGTH) return bad(`Your post's text is too long: ${length} weighted characters, the limit is ${MAX_WEIGHTED_LENGTH}.`);

    const found: XMedia[] = [];
    for (const id of mediaIds) {
      const m = media.get(id);
      if (m === undefined || m.userId !== user.id || m.state !== 'succeeded' || now() - m.uploadedAt >= MEDIA_TTL_S * 1000)
        return bad('Your media IDs are invalid.');
      found.push(m);
    }
    if (found.some((m) => m.kind !== 'image') && found.length > 1) return bad('Your media IDs are invalid.');

    if (inReplyToId !== null) {
      const parent = posts.find((p) => p.id === inReplyToId);
      if (parent === undefined) return bad(`The post [${inReplyToId}] you are replying to does not exist or has been deleted.`);
      const summoned = parent.authorId === user.id || new RegExp(`@${escapeRegExp(user.username)}\\b`, 'i').test(parent.text);
      if (!summoned) return { status: 403, body: NOT_SUMMONED };
    }
    if (text !== '' && posts.some((p) => p.authorId === user.id && p.text === text)) return { status: 403, body: DUPLICATE };

    const id = snowflake();
    const shown = [replaceUrls(text, link), ...(found.length > 0 ? [`https://t.co/${base62(10)}`] : [])].filter((s) => s !== '').join(' ');
    const altTexts: Record<string, string> = {};
    for (const m of found) if (m.altText !== null) altTexts[m.id] = m.altText;
    posts.push({
      id,
      authorId: user.id,
      text,
      shownText: shown,
      mediaIds,
      altTexts,
      inReplyToId,
      replySettings: replySettings ?? null,
      createdAt: isoSecond(now()),
    });
    return { status: 201, body: { data: { id, text: shown, edit_history_post_ids: [id] } } };
  });

  api('GET', '/2/users/:id/tweets', 'timeline', 'timeline', (req) => {
    const user = authenticate(req, ['tweet.read', 'users.read']);
    if (isAnswer(user)) return user;
    const { id } = req.params as { id: string };
    const query = stringFields(req.query);
    if (!users.has(id)) {
      return {
        status: 200,
        body: {
          errors: [
            {
              value: id,
              detail: `Could not find user with id: [${id}].`,
              title: 'Not Found Error',
              resource_type: 'user',
              parameter: 'id',
              resource_id: id,
              type: 'https://api.x.com/2/problems/resource-not-found',
            },
          ],
        },
      };
    }
    const bad = (message: string): Answer => ({ status: 400, body: invalidRequest(message) });
    const max = query.max_results === undefined ? 10 : Number(query.max_results);
    if (!Number.isInteger(max) || max < 5 || max > 100) return bad(`The \`max_results\` query parameter value [${query.max_results}] is not between 5 and 100`);
    const time = (name: 'start_time' | 'end_time') => {
      const value = query[name];
      if (value === undefined) return undefined;
      const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value) ? Date.parse(value) : Number.NaN;
      return Number.isNaN(ms) ? null : ms;
    };
    const start = time('start_time');
    const end = time('end_time');
    if (start === null || end === null) return bad('The `start_time` and `end_time` query parameters must be ISO 8601 timestamps (YYYY-MM-DDTHH:mm:ssZ).');
    const fields = new Set((query['tweet.fields'] ?? query['post.fields'] ?? '').split(',').filter((f) => f !== ''));
    const exclude = new Set((query.exclude ?? '').split(','));
    const list = posts
      .filter((p) => p.authorId === id)
      .filter((p) => (start === undefined || Date.parse(p.createdAt) >= start) && (end === undefined || Date.parse(p.createdAt) < end))
      .filter((p) => !(exclude.has('replies') && p.inReplyToId !== null))
      .reverse();
    let from = 0;
    if (query.pagination_token !== undefined) {
      from = list.findIndex((p) => p.id === query.pagination_token);
      if (from === -1) return bad(`The \`pagination_token\` query parameter value [${query.pagination_token}] is not valid.`);
    }
    const page = list.slice(from, from + max);
    const next = list[from + max];
    const data = page.map((p) => {
      const parent = p.inReplyToId === null ? undefined : posts.find((q) => q.id === p.inReplyToId);
      return {
        id: p.id,
        text: p.shownText,
        edit_history_tweet_ids: [p.id],
        ...(fields.has('created_at') ? { created_at: p.createdAt } : {}),
        ...(fields.has('author_id') ? { author_id: p.authorId } : {}),
        ...(fields.has('referenced_tweets') && p.inReplyToId !== null ? { referenced_tweets: [{ type: 'replied_to', id: p.inReplyToId }] } : {}),
        ...(fields.has('in_reply_to_user_id') && parent !== undefined ? { in_reply_to_user_id: parent.authorId } : {}),
        ...(fields.has('attachments') && p.mediaIds.length > 0 ? { attachments: { media_keys: p.mediaIds.map((m) => media.get(m)?.mediaKey ?? m) } } : {}),
      };
    });
    const meta = {
      result_count: page.length,
      ...(page.length > 0 ? { newest_id: page[0]!.id, oldest_id: page[page.length - 1]!.id } : {}),
      ...(next === undefined ? {} : { next_token: next.id }),
    };
    return { status: 200, body: page.length > 0 ? { data, meta } : { meta } };
  });

  const url = await listenLocal(app);

  const fake: Omit<XFake, 'videoPolls'> = {
    ...fakeControls(app, state, consent),
    url,
    clientId,
    clientSecret,
    addUser({ username, name }) {
      const user = { id: String(nextUserId++), username, name: name ?? username };
      users.set(user.id, user);
      return { ...user };
    },
    consentAs(user) {
      if (!users.has(user.id)) throw new Error(`no user ${user.id}`);
      consent.consentAs(user.id);
    },
    grant(user, scope = SCOPES_NEEDED.join(' ')) {
      if (!users.has(user.id)) throw new Error(`no user ${user.id}`);
      const issued = issueTokens(user.id, scope.split(' '));
      if (issued.refreshToken === undefined) throw new Error('grant needs offline.access in its scope');
      return { accessToken: issued.accessToken, refreshToken: issued.refreshToken };
    },
    revokeApp(user) {
      tokens.kill((t) => t.subject === user.id);
    },
    refreshes: () => refreshCount,
    authorizations: consent.authorizations,
    revocations,
    posts,
    media,
    failNextVideo(message = 'Invalid or Unsupported media, Reason: UnsupportedMedia.') {
      plannedVideoFailures.push(message);
    },
  };
  return withSettings(fake, settings, ['videoPolls']);
}

function invalidRequest(message: string) {
  return {
    errors: [{ message }],
    title: 'Invalid Request',
    detail: 'One or more parameters to your request was invalid.',
    type: 'https://api.x.com/2/problems/invalid-request',
    status: 400,
  };
}

function unknownKey(value: Record<string, unknown>, allowed: string[], prefix = ''): string | undefined {
  const key = Object.keys(value).find((k) => !allowed.includes(k));
  return key === undefined ? undefined : `${prefix}${key}`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** http(s) URLs, without trailing punctuation. (twitter-text also links bare domains; the fake does not.) */
const URL_PATTERN = /https?:\/\/[^\s<>"]+/giu;

function replaceUrls(text: string, replace: (url: string) => string): string {
  return text.replace(URL_PATTERN, (match) => {
    const url = match.replace(/[.,:;!?'")\]]+$/u, '');
    return replace(url) + match.slice(url.length);
  });
}

const WEIGHT_ONE: [number, number][] = [
  [0x0000, 0x10ff],
  [0x2000, 0x200d],
  [0x2010, 0x201f],
  [0x2032, 0x2037],
];
const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/** twitter-text's weighted length (config v3): NFC, URLs 23, emoji sequences 2, code points 1 or 2 by range. */
export function weightedLength(text: string): number {
  let units = 0;
  const rest = replaceUrls(text.normalize('NFC'), () => {
    units += T_CO_LENGTH;
    return '';
  });
  for (const { segment } of graphemes.segment(rest)) {
    const emoji =
      /\p{Regional_Indicator}/u.test(segment) ||
      [...segment].some((ch) => /\p{Extended_Pictographic}/u.test(ch) && (ch.codePointAt(0)! > 0xff || segment.includes('\uFE0F')));
    if (emoji) {
      units += 2;
      continue;
    }
    for (const ch of segment) {
      const cp = ch.codePointAt(0)!;
      units += WEIGHT_ONE.some(([lo, hi]) => cp >= lo && cp <= hi) ? 1 : 2;
    }
  }
  return units;
}
