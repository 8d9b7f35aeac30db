import { randomBytes } from 'node:crypto';
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
  type Authorization,
  type Fake,
  type FakeOptions,
  type Fault,
  type HintedRevocation,
  type RecordedRequest,
} from './fake-kit.js';

/**
 * An in-process Pinterest API v5, written from its documentation, for the calls Herald makes. `url` stands
 * for https://www.pinterest.com (the consent page), https://api.pinterest.com (everything under /v5) and the
 * media upload bucket (POST /fake-s3/upload): the paths do not collide.
 * What the documentation says (pinterest/api-description v5/openapi.json 5.23.0, c05b189):
 * - GET https://www.pinterest.com/oauth/?client_id&redirect_uri&response_type=code&scope=<comma-separated>&state,
 *   back to redirect_uri with `code` and `state` (developers.pinterest.com/docs/getting-started/authentication/);
 * - POST /v5/oauth/token: form body, client authenticated with `Authorization: Basic base64(app_id:secret)` (compared byte for byte);
 *   grants authorization_code (code, redirect_uri required) and refresh_token (refresh_token; `scope`,
 *   `continuous_refresh` optional, ignored here); answers `{access_token, token_type (default bearer), expires_in,
 *   scope, response_type, refresh_token, refresh_token_expires_in, refresh_token_expires_at}`; a refresh answer
 *   requires a new `refresh_token` (continuous refresh tokens: 60 days, refreshable indefinitely); errors are the
 *   generic `Error {code, message}`;
 * - POST /v5/oauth/token/revoke (form `token`, `token_type_hint` access_token|refresh_token): 200 with no content;
 *   401 example `{"code":2,"message":"Authentication failed."}`; 403 example code 29;
 * - GET /v5/user_account (user_accounts:read) → Account `{account_type PINNER|BUSINESS, id, username, business_name,
 *   profile_image, website_url, ...}`; GET /v5/boards (boards:read; page_size 1–250, default 25; bookmark);
 * - POST /v5/pins (boards:read boards:write pins:read pins:write) PinCreate: board_id `^\d+$`, title ≤100,
 *   description ≤800, link ≤2048, alt_text ≤500, media_source one of image_url {url}, multiple_image_urls
 *   {items [{url}] minItems 2 maxItems 5}, video_id {media_id `^\d+$`, cover_image_url | cover_image_data +
 *   cover_image_content_type | cover_image_key_frame_time ≥0}; 201 Pin `{id, created_at, board_id, title,
 *   description, link, alt_text, media {media_type image|video|multiple_images}, ...}`;
 * - POST /v5/media (pins:read pins:write) `{media_type: video}` → 201 `{media_id, media_type, upload_url,
 *   upload_parameters {Content-Type, key, policy, x-amz-algorithm, x-amz-credential, x-amz-date,
 *   x-amz-security-token, x-amz-signature}}`: POST to upload_url every upload_parameters field and the `file`;
 *   GET /v5/media/{media_id} (pins:read) → `{media_id, media_type, status registered|processing|succeeded|failed}`;
 * - GET /v5/pins and GET /v5/boards/{board_id}/pins (boards:read pins:read) → `{items, bookmark}`;
 *   404 example on the latter `{"code":404,"message":"Board not found."}`; POST /pins/{id}/save's 404 example
 *   `{"code":40,"message":"Board not found."}`; 429 example `{"code":8,"message":"This request exceeded a rate
 *   limit. ..."}`;
 * - rate limits: `x-ratelimit-category` is an OpenAPI extension naming each operation's category
 *   (org_write / org_read), not a response header; no rate-limit response headers are documented, so the fake
 *   sends none.
 * Seen in the wild, not documented: 401 `{"code":2,"message":"Authentication failed."}` for a bad or expired
 * access token (pinterest-node-api#20); 401 `{"code":283,"message":"The authorization grant is invalid"}` for a
 * bad refresh token (pinterest/pinterest-python-sdk#114); code 29 "Apps with Trial access may not create Pins in
 * production ..." (gitroomhq/postiz-app#1084; its status is not given: the fake answers 403, as the documented
 * code-29 example on revoke); "Unable to reach the URL" for an unreachable image_url (Postiz).
 * S3 POST policy rules (docs.aws.amazon.com/AmazonS3/latest/API/sigv4-HTTPPOSTConstructPolicy.html): every
 * policy field must be sent, and fields after the `file` part are ignored; 204 No Content on success.
 * Choices of the fake: the consent code lives 10 minutes and is single use; a token error answers the documented
 * `{code, message}` (401 code 283 for a bad code or refresh token, 401 code 2 for bad client credentials), or the
 * OAuth `{error, error_description}` with 400/401 when `oauthErrors` is set; a refresh leaves earlier access
 * tokens valid until they expire, and the old refresh token is refused; a missing scope answers 401 code 3
 * "Authorization failed."; the image fetch must answer 2xx with an `image/*` content type, else 400
 * `{"code":1,"message":"Unable to reach the URL: ..."}`; a cover_image_url is fetched the same way; a video
 * pin's media must be the caller's and `succeeded`, else 400 code 1; only image_url, multiple_image_urls and
 * video_id are accepted (others 400); pin and media ids are 18-digit numeric strings; `scope` is echoed
 * comma-separated as asked; video processing moves only when polled (`videoPolls` answers `processing`, then
 * succeeded or the planned failure); the fake's own endpoint and S3 errors are S3-style XML.
 * Faults a test plans are taken by the next matching request, in order. No timers: the clock is read on demand.
 */

export interface PinterestUser {
  /** Numeric, as a string. */
  id: string;
  username: string;
  accountType: 'BUSINESS' | 'PINNER';
  businessName: string | null;
  profileImage: string;
  websiteUrl: string;
}

export interface PinterestBoard {
  /** Numeric, as a string. */
  id: string;
  userId: string;
  name: string;
  createdAt: string;
}

export interface PinterestPin {
  id: string;
  userId: string;
  boardId: string;
  title: string | null;
  description: string | null;
  link: string | null;
  altText: string | null;
  mediaType: 'image' | 'multiple_images' | 'video';
  /** The image URLs fetched (image and multiple_images). */
  imageUrls: string[];
  mediaId: string | null;
  /** By the fake's clock, to the second (ISO 8601). */
  createdAt: string;
}

export interface PinterestMedia {
  id: string;
  userId: string;
  mediaType: 'video';
  status: 'registered' | 'processing' | 'succeeded' | 'failed';
  /** What the upload stored (empty until then). */
  bytes: Buffer;
  /** The file part's content type and file name as uploaded. */
  mime: string | null;
  filename: string | null;
  /** Status polls left to answer `processing`. */
  pollsLeft: number;
  /** Whether processing is to end `failed`. */
  willFail: boolean;
  uploadParameters: Record<string, string>;
}

export interface PinterestFetch {
  url: string;
  /** null when the URL could not be reached at all. */
  status: number | null;
  contentType: string | null;
  bytes: number;
  /** Why the fetch counted as unreachable, or null. */
  error: string | null;
}

export type PinterestAuthorization = Authorization;

export type PinterestRevocation = HintedRevocation;

export type PinterestRecordedRequest = RecordedRequest;

/** token: POST /v5/oauth/token; revoke: POST /v5/oauth/token/revoke; user: GET /v5/user_account; boards: GET /v5/boards;
 * pins: POST /v5/pins; media: POST /v5/media; upload: POST /fake-s3/upload; status: GET /v5/media/{id};
 * list: GET /v5/pins and GET /v5/boards/{id}/pins. */
export type PinterestFaultTarget = 'token' | 'revoke' | 'user' | 'boards' | 'pins' | 'media' | 'upload' | 'status' | 'list';

/** An `answer`'s body defaults to Pinterest's for 401, 403, 429 and 5xx. */
export type PinterestFault = Fault;

export interface PinterestFakeOptions extends FakeOptions {
  clientId?: string;
  /** Status polls that answer `processing` before a video's processing ends; 2 by default. */
  videoPolls?: number;
  /** Token-endpoint errors as OAuth `{error, error_description}` instead of Pinterest's `{code, message}`. */
  oauthErrors?: boolean;
}

export interface PinterestFake extends Fake<{ id: string }, PinterestFaultTarget> {
  /** Stands for https://www.pinterest.com, https://api.pinterest.com and the upload bucket alike. */
  url: string;
  clientId: string;
  addUser(user: { username: string; accountType?: 'BUSINESS' | 'PINNER'; businessName?: string; profileImage?: string; websiteUrl?: string }): PinterestUser;
  addBoard(user: { id: string }, board: { name: string }): { id: string; name: string };
  /** Tokens as a completed consent would give them, without the round trip. */
  grant(user: { id: string }, scope?: string): { accessToken: string; refreshToken: string };
  /** POST /v5/pins requests received (faulted ones too). */
  pinCalls(): number;
  /** While true, POST /v5/pins answers 403 code 29 (a Trial app in production). */
  trialMode: boolean;
  /** Status polls answered `processing` for videos uploaded from now on. */
  videoPolls: number;
  /** The next video uploaded ends its processing `failed`. */
  failNextVideo(): void;
  authorizations: PinterestAuthorization[];
  revocations: PinterestRevocation[];
  /** Pins in creation order. */
  pins: PinterestPin[];
  boards: PinterestBoard[];
  media: Map<string, PinterestMedia>;
  /** Every URL the fake fetched for a pin (images, covers), in order. */
  fetches: PinterestFetch[];
}

const SCOPES_NEEDED = ['boards:read', 'boards:write', 'pins:read', 'pins:write', 'user_accounts:read'];
const CODE_TTL_MS = 10 * 60_000;
const ACCESS_TTL_S = 2_592_000;
const REFRESH_TTL_S = 5_184_000;
const MB = 1024 * 1024;
const UPLOAD_PATH = '/fake-s3/upload';

const AUTH_FAILED = { code: 2, message: 'Authentication failed.' };
const AUTHORIZATION_FAILED = { code: 3, message: 'Authorization failed.' };
const BAD_GRANT = { code: 283, message: 'The authorization grant is invalid' };
const TRIAL = {
  code: 29,
  message: 'Apps with Trial access may not create Pins in production https://api.pinterest.com - use API Sandbox https://api-sandbox.pinterest.com instead.',
};
const RATE_LIMITED = {
  code: 8,
  message: 'This request exceeded a rate limit. This can happen if the client exceeds one\nof the published rate limits within a short time window.',
};
const FAULT_BODIES: Record<number, unknown> = {
  401: AUTH_FAILED,
  403: { code: 29, message: 'You are not permitted to access that resource.' },
  429: RATE_LIMITED,
  500: { code: 0, message: 'Internal Server Error' },
  502: { code: 0, message: 'Bad Gateway' },
  503: { code: 0, message: 'Service Unavailable' },
};

interface Code {
  userId: string;
  redirectUri: string;
  scope: string[];
}

export async function startPinterestFake(options: PinterestFakeOptions = {}): Promise<PinterestFake> {
  const clientId = options.clientId ?? String(1_400_000 + Math.floor(Math.random() * 100_000));
  // With `-`, `_`, `.` and `~`, which a form-encoding client would send altered.
  const clientSecret = options.clientSecret ?? `${randomBytes(20).toString('hex')}-_.~`;
  const oauthErrors = options.oauthErrors ?? false;
  const state = createFakeState<PinterestFaultTarget>(options.now);
  const { now, recorder, tokens } = state;

  const users = new Map<string, PinterestUser>();
  const boards: PinterestBoard[] = [];
  const pins: PinterestPin[] = [];
  const media = new Map<string, PinterestMedia>();
  const fetches: PinterestFetch[] = [];
  const revocations: PinterestRevocation[] = [];
  const codes = new CodeStore<Code>(now, CODE_TTL_MS);
  let refreshCount = 0;
  let pinCallCount = 0;
  let plannedVideoFailures = 0;
  const settings = { videoPolls: options.videoPolls ?? 2, trialMode: false };
  let nextUserId = 1_055_200_000_000_000_001n;
  let nextBoardId = 1_055_300_000_000_000_001n;
  let nextPinId = 1_055_400_000_000_000_001n;
  let nextMediaId = 1_055_500_000_000_000_001n;

  const app = await createFakeApp({
    bodyLimit: 64 * MB,
    multipartFileSize: 512 * MB,
    errorBody: (status, message) => ({ code: status < 500 ? 1 : 0, message }),
    notFoundBody: () => ({ code: 404, message: 'Not found.' }),
  });

  const isoSecond = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

  /** The caller's user, or the answer to give instead. */
  const authenticate = (req: FastifyRequest, scopes: string[]): PinterestUser | Answer => {
    const grant = tokens.bearer(req);
    const user = grant === undefined ? undefined : users.get(grant.subject);
    if (grant === undefined || user === undefined) return { status: 401, body: AUTH_FAILED };
    if (!scopes.every((s) => grant.scope.includes(s))) return { status: 401, body: AUTHORIZATION_FAILED };
    return user;
  };

  const tokenError = (kind: 'client' | 'grant' | 'request', description: string): Answer => {
    if (oauthErrors) {
      const error = kind === 'client' ? 'invalid_client' : kind === 'grant' ? 'invalid_grant' : 'invalid_request';
      return { status: kind === 'client' ? 401 : 400, body: { error, error_description: description } };
    }
    if (kind === 'client') return { status: 401, body: AUTH_FAILED };
    if (kind === 'grant') return { status: 401, body: BAD_GRANT };
    return { status: 400, body: { code: 1, message: description } };
  };

  const issueTokens = (userId: string, scope: string[]) => ({
    accessToken: tokens.issue('access', `pina_${randomBytes(48).toString('base64url')}`, { subject: userId, scope, ttlMs: ACCESS_TTL_S * 1000 }).token,
    refreshToken: tokens.issue('refresh', `pinr_${randomBytes(48).toString('base64url')}`, { subject: userId, scope, ttlMs: REFRESH_TTL_S * 1000 }).token,
  });

  const tokenAnswer = (issued: { accessToken: string; refreshToken: string }, scope: string[], responseType: string): Answer => ({
    status: 200,
    body: {
      access_token: issued.accessToken,
      refresh_token: issued.refreshToken,
      response_type: responseType,
      token_type: 'bearer',
      expires_in: ACCESS_TTL_S,
      refresh_token_expires_in: REFRESH_TTL_S,
      refresh_token_expires_at: Math.floor(now() / 1000) + REFRESH_TTL_S,
      scope: scope.join(','),
    },
  });

  /**
   * Every API route: the request recorded, a planned fault taken, then the handler. `commitThenDrop` runs the
   * handler and destroys the socket instead of answering.
   */
  const route = (
    method: 'GET' | 'POST',
    url: string,
    target: PinterestFaultTarget,
    handler: (req: FastifyRequest, body: unknown) => Answer | Promise<Answer>,
    onReceive?: () => void,
  ) =>
    fakeRoute(app, state, {
      method,
      url,
      target,
      admit: onReceive,
      faultAnswer: (fault) => plannedAnswer(fault, (status) => FAULT_BODIES[status] ?? { code: status >= 500 ? 0 : 1, message: `Error ${status}` }),
      handle: handler,
    });

  // --- OAuth 2.0 -------------------------------------------------------------------------------

  const consent = installConsentPage({
    app,
    path: '/oauth/',
    recorder,
    who: 'userId',
    firstSubject: () => users.keys().next().value,
    check: (query) => {
      const missing = SCOPES_NEEDED.filter((s) => !scopeOf(query).includes(s));
      return query.response_type !== 'code'
        ? 'response_type must be code'
        : query.client_id !== clientId
          ? 'unknown client_id'
          : query.redirect_uri === undefined || !/^https?:\/\//.test(query.redirect_uri)
            ? 'redirect_uri missing or not an http(s) URL'
            : missing.length > 0
              ? `scope lacks ${missing.join(',')}`
              : null;
    },
    errorPage: (reason) => `<p>Something went wrong. Please try again.</p><!-- ${reason} -->`,
    nobody: { reason: 'no user to consent as (addUser first)', page: '<p>No user is signed in to the fake (call addUser).</p>' },
    refused: (query) => ({ error: 'access_denied', ...stateOf(query) }),
    approved: (query, userId) => {
      const code = randomBytes(20).toString('hex');
      codes.issue(code, { userId, redirectUri: query.redirect_uri!, scope: scopeOf(query) });
      return { code, ...stateOf(query) };
    },
  });

  route('POST', '/v5/oauth/token', 'token', (req, body) => {
    if (!basicClientMatches(req, clientId, clientSecret)) return tokenError('client', 'Client authentication failed.');
    const form = stringFields(body);
    if (form.grant_type === 'authorization_code') {
      const code = codes.redeem(form.code);
      if (code === undefined) return tokenError('grant', 'The authorization code is invalid or expired.');
      if (form.redirect_uri !== code.redirectUri) return tokenError('grant', 'redirect_uri does not match the authorization request.');
      return tokenAnswer(issueTokens(code.userId, code.scope), code.scope, 'authorization_code');
    }
    if (form.grant_type === 'refresh_token') {
      const old = tokens.live('refresh', form.refresh_token);
      if (old === undefined) return tokenError('grant', 'The refresh token is invalid or expired.');
      old.dead = true;
      refreshCount += 1;
      return tokenAnswer(issueTokens(old.subject, old.scope), old.scope, 'refresh_token');
    }
    return tokenError('request', `Unsupported grant_type: ${form.grant_type ?? '(none)'}.`);
  });

  route('POST', '/v5/oauth/token/revoke', 'revoke', (req, body) => {
    if (!basicClientMatches(req, clientId, clientSecret)) return { status: 401, body: AUTH_FAILED };
    const form = stringFields(body);
    if (form.token === undefined) return { status: 400, body: { code: 1, message: 'Missing required parameter: token.' } };
    revocations.push({ token: form.token, tokenTypeHint: form.token_type_hint ?? null, kind: tokens.revoke(form.token) });
    return { status: 200 };
  });

  // --- Account and boards ----------------------------------------------------------------------

  route('GET', '/v5/user_account', 'user', (req) => {
    const user = authenticate(req, ['user_accounts:read']);
    if (isAnswer(user)) return user;
    return {
      status: 200,
      body: {
        account_type: user.accountType,
        id: user.id,
        username: user.username,
        business_name: user.businessName,
        profile_image: user.profileImage,
        website_url: user.websiteUrl,
        about: '',
        board_count: boards.filter((b) => b.userId === user.id).length,
        pin_count: pins.filter((p) => p.userId === user.id).length,
      },
    };
  });

  const boardJson = (board: PinterestBoard) => ({
    id: board.id,
    name: board.name,
    description: null,
    privacy: 'PUBLIC',
    created_at: board.createdAt,
    owner: { username: users.get(board.userId)?.username ?? '' },
    pin_count: pins.filter((p) => p.boardId === board.id).length,
  });

  route('GET', '/v5/boards', 'boards', (req) => {
    const user = authenticate(req, ['boards:read']);
    if (isAnswer(user)) return user;
    return page(
      stringFields(req.query),
      boards.filter((b) => b.userId === user.id),
      boardJson,
    );
  });

  // --- Pins ------------------------------------------------------------------------------------

  const pinJson = (pin: PinterestPin) => ({
    id: pin.id,
    created_at: pin.createdAt,
    board_id: pin.boardId,
    board_section_id: null,
    board_owner: { username: users.get(pin.userId)?.username ?? '' },
    title: pin.title,
    description: pin.description,
    link: pin.link,
    alt_text: pin.altText,
    dominant_color: null,
    parent_pin_id: null,
    is_owner: true,
    is_standard: true,
    has_been_promoted: false,
    creative_type: pin.mediaType === 'video' ? 'VIDEO' : pin.mediaType === 'multiple_images' ? 'CAROUSEL' : 'REGULAR',
    media: { media_type: pin.mediaType },
  });

  /** GETs a URL the way Pinterest fetches an image: 2xx and an image content type, else unreachable. */
  const fetchImage = async (url: string): Promise<boolean> => {
    const entry: PinterestFetch = { url, status: null, contentType: null, bytes: 0, error: null };
    fetches.push(entry);
    if (!/^https?:\/\//i.test(url)) {
      entry.error = 'not an http(s) URL';
      return false;
    }
    try {
      const response = await fetch(url, { redirect: 'follow', signal: AbortSignal.timeout(10_000) });
      entry.status = response.status;
      entry.contentType = response.headers.get('content-type');
      entry.bytes = (await response.arrayBuffer()).byteLength;
      if (!response.ok) entry.error = `HTTP ${response.status}`;
      else if (!/^image\//i.test(entry.contentType ?? '')) entry.error = `content type ${entry.contentType ?? '(none)'} is not an image`;
      else if (entry.bytes === 0) entry.error = 'empty body';
    } catch (error) {
      entry.error = error instanceof Error ? error.message : String(error);
    }
    return entry.error === null;
  };

  const unreachable = (url: string): Answer => ({ status: 400, body: { code: 1, message: `Unable to reach the URL: ${url}` } });

  route(
    'POST',
    '/v5/pins',
    'pins',
    async (req, body) => {
      const user = authenticate(req, ['boards:read', 'boards:write', 'pins:read', 'pins:write']);
      if (isAnswer(user)) return user;
      if (settings.trialMode) return { status: 403, body: TRIAL };
      const bad = (message: string): Answer => ({ status: 400, body: { code: 1, message } });
      if (!isObject(body)) return bad('Invalid request body: a JSON object is required.');
      const { board_id: boardId, media_source: source } = body;
      if (typeof boardId !== 'string' || !/^\d+$/.test(boardId)) return bad(`Invalid request: '${String(boardId)}' does not match '^\\d+$' - 'board_id'`);
      const text: Record<string, string | null> = {};
      for (const [name, max] of [
        ['title', 100],
        ['description', 800],
        ['link', 2048],
        ['alt_text', 500],
      ] as const) {
        const value = body[name];
        if (value === undefined || value === null) {
          text[name] = null;
          continue;
        }
        if (typeof value !== 'string') return bad(`Invalid request: '${name}' must be a string`);
        if (value.length > max) return bad(`Invalid request: '${name}' is too long - constraint: maxLength=${max}`);
        text[name] = value;
      }
      if (!isObject(source)) return bad("Invalid request: 'media_source' is a required property");
      const type = source.source_type;
      const board = boards.find((b) => b.id === boardId);

      let mediaType: PinterestPin['mediaType'];
      let imageUrls: string[] = [];
      let mediaId: string | null = null;
      if (type === 'image_url') {
        if (typeof source.url !== 'string') return bad("Invalid request: 'url' is a required property - 'media_source'");
        if (board === undefined || board.userId !== user.id) return { status: 404, body: { code: 40, message: 'Board not found.' } };
        if (!(await fetchImage(source.url))) return unreachable(source.url);
        mediaType = 'image';
        imageUrls = [source.url];
      } else if (type === 'multiple_image_urls') {
        const items = source.items;
        if (!Array.isArray(items)) return bad("Invalid request: 'items' is a required property - 'media_source'");
        if (items.length < 2) return bad(`Invalid request: ${items.length} items - constraint: minItems=2 - 'media_source.items'`);
        if (items.length > 5) return bad(`Invalid request: ${items.length} items - constraint: maxItems=5 - 'media_source.items'`);
        const urls: string[] = [];
        for (const item of items) {
          if (!isObject(item) || typeof item.url !== 'string') return bad("Invalid request: 'url' is a required property - 'media_source.items'");
          urls.push(item.url);
        }
        if (board === undefined || board.userId !== user.id) return { status: 404, body: { code: 40, message: 'Board not found.' } };
        for (const url of urls) if (!(await fetchImage(url))) return unreachable(url);
        mediaType = 'multiple_images';
        imageUrls = urls;
      } else if (type === 'video_id') {
        const id = source.media_id;
        if (typeof id !== 'string' || !/^\d+$/.test(id)) return bad("Invalid request: 'media_id' must match '^\\d+$' - 'media_source'");
        const frame = source.cover_image_key_frame_time;
        if (frame !== undefined && (typeof frame !== 'number' || !Number.isInteger(frame) || frame < 0))
          return bad("Invalid request: 'cover_image_key_frame_time' must be an integer ≥ 0 - 'media_source'");
        const coverUrl = source.cover_image_url;
        const coverData = typeof source.cover_image_data === 'string' && typeof source.cover_image_content_type === 'string';
        if (frame === undefined && typeof coverUrl !== 'string' && !coverData)
          return bad(
            'Invalid request: a video Pin needs a cover: cover_image_url, cover_image_key_frame_time, or cover_image_data with cover_image_content_type.',
          );
        if (board === undefined || board.userId !== user.id) return { status: 404, body: { code: 40, message: 'Board not found.' } };
        const m = media.get(id);
        if (m === undefined || m.userId !== user.id) return bad(`Media ${id} not found.`);
        if (m.status !== 'succeeded') return bad(`Media ${id} is not ready: its status is ${m.status}.`);
        if (typeof coverUrl === 'string' && frame === undefined && !(await fetchImage(coverUrl))) return unreachable(coverUrl);
        mediaType = 'video';
        mediaId = id;
      } else {
        return bad(`Invalid request: source_type '${String(type)}' is not supported (the fake takes image_url, multiple_image_urls, video_id).`);
      }

      const pin: PinterestPin = {
        id: String(nextPinId++),
        userId: user.id,
        boardId,
        title: text.title ?? null,
        description: text.description ?? null,
        link: text.link ?? null,
        altText: text.alt_text ?? null,
        mediaType,
        imageUrls,
        mediaId,
        createdAt: isoSecond(now()),
      };
      pins.push(pin);
      return { status: 201, body: pinJson(pin) };
    },
    () => {
      pinCallCount += 1;
    },
  );

  route('GET', '/v5/pins', 'list', (req) => {
    const user = authenticate(req, ['boards:read', 'pins:read']);
    if (isAnswer(user)) return user;
    return page(stringFields(req.query), pins.filter((p) => p.userId === user.id).reverse(), pinJson);
  });

  route('GET', '/v5/boards/:board_id/pins', 'list', (req) => {
    const user = authenticate(req, ['boards:read', 'pins:read']);
    if (isAnswer(user)) return user;
    const { board_id: boardId } = req.params as { board_id: string };
    const board = boards.find((b) => b.id === boardId);
    if (board === undefined || board.userId !== user.id) return { status: 404, body: { code: 404, message: 'Board not found.' } };
    return page(stringFields(req.query), pins.filter((p) => p.boardId === boardId).reverse(), pinJson);
  });

  // --- Media -----------------------------------------------------------------------------------

  route('POST', '/v5/media', 'media', (req, body) => {
    const user = authenticate(req, ['pins:read', 'pins:write']);
    if (isAnswer(user)) return user;
    if (!isObject(body) || body.media_type !== 'video') return { status: 400, body: { code: 1, message: "Invalid request: 'media_type' must be 'video'" } };
    const id = String(nextMediaId++);
    const t = new Date(now());
    const day = t.toISOString().slice(0, 10).replaceAll('-', '');
    const stamp = `${day}T${t.toISOString().slice(11, 19).replaceAll(':', '')}Z`;
    const hex = () => randomBytes(1).toString('hex');
    const key = `uploads/${hex()}/${hex()}/${hex()}/${user.id}:video:${id}:${randomBytes(8).readBigUInt64BE()}`;
    const policy = Buffer.from(
      JSON.stringify({ expiration: new Date(t.getTime() + 3_600_000).toISOString(), conditions: [{ bucket: 'pinterest-media-upload' }, { key }] }),
    ).toString('base64');
    const uploadParameters: Record<string, string> = {
      'x-amz-date': stamp,
      'x-amz-signature': randomBytes(32).toString('hex'),
      'x-amz-security-token': randomBytes(48).toString('base64'),
      'x-amz-algorithm': 'AWS4-HMAC-SHA256',
      key,
      policy,
      'x-amz-credential': `ASIAFAKE${randomBytes(6).toString('hex').toUpperCase()}/${day}/us-east-1/s3/aws4_request`,
      'Content-Type': 'multipart/form-data',
    };
    media.set(id, {
      id,
      userId: user.id,
      mediaType: 'video',
      status: 'registered',
      bytes: Buffer.alloc(0),
      mime: null,
      filename: null,
      pollsLeft: 0,
      willFail: false,
      uploadParameters,
    });
    return {
      status: 201,
      body: { media_id: id, media_type: 'video', upload_url: `${url}${UPLOAD_PATH}`, upload_parameters: uploadParameters },
    };
  });

  route('POST', UPLOAD_PATH, 'upload', (_req, body) => {
    const s3Error = (status: number, code: string, message: string): Answer => ({
      status,
      headers: { 'content-type': 'application/xml' },
      body: `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${escapeXml(message)}</Message></Error>`,
    });
    if (!(body instanceof MultipartBody)) return s3Error(412, 'PreconditionFailed', 'Bucket POST must be of the enclosure-type multipart/form-data');
    const before = body.fieldsBeforeFile();
    const key = before.key;
    const m = key === undefined ? undefined : [...media.values()].find((x) => x.uploadParameters.key === key);
    if (key === undefined)
      return s3Error(400, 'InvalidArgument', "Bucket POST must contain a field named 'key'.  If it is specified, please check the order of the fields.");
    if (m === undefined) return s3Error(403, 'AccessDenied', 'Invalid according to Policy: Policy Condition failed: ["eq", "$key", ...]');
    for (const [name, value] of Object.entries(m.uploadParameters)) {
      const sent = Object.entries(before).find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1];
      if (sent === undefined)
        return s3Error(403, 'AccessDenied', `Invalid according to Policy: Policy Condition failed: missing field ${name} (before the file)`);
      if (sent !== value) return s3Error(403, 'AccessDenied', `Invalid according to Policy: Policy Condition failed: ["eq", "$${name}", ...]`);
    }
    const file = body.files.file;
    if (file === undefined) return s3Error(400, 'InvalidArgument', "POST requires exactly one file upload per request (a part named 'file').");
    if (file.bytes.length === 0) return s3Error(400, 'EntityTooSmall', 'Your proposed upload is smaller than the minimum allowed size');
    if (m.status === 'succeeded' || m.status === 'failed') return s3Error(403, 'AccessDenied', 'Invalid according to Policy: Policy expired.');
    m.bytes = file.bytes;
    m.mime = file.mime;
    m.filename = file.filename;
    if (m.status === 'registered') {
      m.status = 'processing';
      m.pollsLeft = settings.videoPolls;
      m.willFail = plannedVideoFailures > 0;
      if (m.willFail) plannedVideoFailures -= 1;
    }
    return { status: 204 };
  });

  route('GET', '/v5/media/:media_id', 'status', (req) => {
    const user = authenticate(req, ['pins:read']);
    if (isAnswer(user)) return user;
    const { media_id: id } = req.params as { media_id: string };
    const m = media.get(id);
    if (m === undefined || m.userId !== user.id) return { status: 404, body: { code: 404, message: 'Media upload not found.' } };
    if (m.status === 'processing') {
      if (m.pollsLeft > 0) m.pollsLeft -= 1;
      else m.status = m.willFail ? 'failed' : 'succeeded';
    }
    return { status: 200, body: { media_id: m.id, media_type: m.mediaType, status: m.status } };
  });

  const url = await listenLocal(app);

  const knownUser = (user: { id: string }) => {
    const found = users.get(user.id);
    if (found === undefined) throw new Error(`no user ${user.id}`);
    return found;
  };

  const fake: Omit<PinterestFake, 'trialMode' | 'videoPolls'> = {
    ...fakeControls(app, state, consent),
    url,
    clientId,
    clientSecret,
    addUser({ username, accountType = 'BUSINESS', businessName, profileImage, websiteUrl }) {
      const user: PinterestUser = {
        id: String(nextUserId++),
        username,
        accountType,
        businessName: businessName ?? (accountType === 'BUSINESS' ? username : null),
        profileImage: profileImage ?? `https://i.pinimg.com/600x600_R/fake/${username}.jpg`,
        websiteUrl: websiteUrl ?? '',
      };
      users.set(user.id, user);
      return { ...user };
    },
    addBoard(user, { name }) {
      knownUser(user);
      const board = { id: String(nextBoardId++), userId: user.id, name, createdAt: isoSecond(now()) };
      boards.push(board);
      return { id: board.id, name };
    },
    consentAs(user) {
      consent.consentAs(knownUser(user).id);
    },
    grant(user, scope = SCOPES_NEEDED.join(',')) {
      return issueTokens(knownUser(user).id, scope.split(','));
    },
    refreshes: () => refreshCount,
    pinCalls: () => pinCallCount,
    failNextVideo() {
      plannedVideoFailures += 1;
    },
    authorizations: consent.authorizations,
    revocations,
    pins,
    boards,
    media,
    fetches,
  };
  return withSettings(fake, settings, ['trialMode', 'videoPolls']);
}

/** A page of `items` by Pinterest's bookmark pagination (page_size 1–250, default 25); the bookmark is the fake's own. */
function page<T>(query: Record<string, string | undefined>, items: T[], toJson: (item: T) => unknown): Answer {
  const size = query.page_size === undefined ? 25 : Number(query.page_size);
  if (!Number.isInteger(size) || size < 1 || size > 250)
    return { status: 400, body: { code: 1, message: `Invalid parameters: page_size '${query.page_size}' must be an integer from 1 to 250.` } };
  let from = 0;
  if (query.bookmark !== undefined && query.bookmark !== '') {
    from = Number(Buffer.from(query.bookmark, 'base64url').toString('utf8'));
    if (!Number.isInteger(from) || from < 0) return { status: 400, body: { code: 1, message: 'Invalid parameters: bookmark is not valid.' } };
  }
  const next = from + size < items.length ? Buffer.from(String(from + size)).toString('base64url') : null;
  return { status: 200, body: { items: items.slice(from, from + size).map(toJson), bookmark: next } };
}

/** The consent's scopes, comma-separated as Pinterest takes them. */
function scopeOf(query: Record<string, string>): string[] {
  return (query.scope ?? '').split(',').filter((s) => s !== '');
}
