import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import {
  base62,
  CodeStore,
  createFakeApp,
  createFakeState,
  fakeControls,
  fakeRoute,
  header,
  installConsentPage,
  isAnswer,
  isObject,
  listenLocal,
  plannedAnswer,
  randomDigits,
  stateOf,
  stringFields,
  withSettings,
  type Answer,
  type Authorization,
  type Fake,
  type FakeOptions,
  type Fault,
  type RecordedRequest,
  type Revocation,
} from './fake-kit.js';

/**
 * An in-process TikTok Login Kit (OAuth v2) and Content Posting API, written from their documentation, for the calls
 * Herald makes. `url` stands for https://www.tiktok.com (consent) and https://open.tiktokapis.com (everything else,
 * uploads included): their paths do not collide.
 * - developers.tiktok.com/doc/login-kit-web: GET /v2/auth/authorize/ (client_key, scope comma-separated,
 *   response_type=code, redirect_uri, state) → redirect_uri with `code`, `scopes`, `state`, or `error=access_denied`,
 *   `error_description`, `state`;
 * - developers.tiktok.com/docs/en/oauth-refresh-a-user-access-token and /doc/oauth-user-access-token-management: POST
 *   /v2/oauth/token/ (form: client_key, client_secret, code, grant_type=authorization_code, redirect_uri, or
 *   grant_type=refresh_token, refresh_token) → `{access_token, expires_in: 7200, open_id, refresh_token,
 *   refresh_expires_in: 15552000, scope, token_type: 'Bearer'}`; "Refresh tokens are rotated … The previous refresh
 *   token stops working once a new one is issued"; POST /v2/oauth/revoke/ (client_key, client_secret, token);
 * - developers.tiktok.com/doc/oauth-error-handling: OAuth errors are `{error, error_description, log_id}` with error
 *   access_denied | invalid_client | invalid_grant | invalid_request | invalid_scope | unsupported_grant_type …;
 * - developers.tiktok.com/doc/tiktok-api-v2-error-handling: API answers are `{data, error: {code, message, log_id}}`,
 *   `code: 'ok'` on success; access_token_invalid 401, scope_not_authorized 401, invalid_params 400, rate_limit_exceeded
 *   429, internal_error 500;
 * - developers.tiktok.com/doc/content-posting-api-reference-query-creator-info: POST
 *   /v2/post/publish/creator_info/query/ → creator_avatar_url, creator_username, creator_nickname,
 *   privacy_level_options, comment_disabled, duet_disabled, stitch_disabled, max_video_post_duration_sec;
 * - developers.tiktok.com/doc/content-posting-api-reference-direct-post: POST /v2/post/publish/video/init/ (scope
 *   video.publish, 6 requests a minute per access token) → `{publish_id, upload_url}`; "All content posted by
 *   unaudited clients will be restricted to private viewing mode";
 * - developers.tiktok.com/doc/content-sharing-guidelines: unaudited clients "can only post contents in SELF_ONLY";
 * - developers.tiktok.com/doc/content-posting-api-media-transfer-guide: PUT upload_url with Content-Type,
 *   Content-Length, `Content-Range: bytes a-b/total`; chunks of 5–64 MB, the last up to 128 MB; total_chunk_count =
 *   floor(video_size / chunk_size); under 5 MB one chunk of the whole size; 1–1,000 chunks, sent sequentially;
 * - developers.tiktok.com/doc/content-posting-api-reference-photo-post: POST /v2/post/publish/content/init/
 *   (media_type PHOTO, post_mode DIRECT_POST | MEDIA_UPLOAD, title ≤ 90, description ≤ 4,000, source PULL_FROM_URL,
 *   photo_images, photo_cover_index; six requests a minute per token);
 * - developers.tiktok.com/doc/content-posting-api-reference-get-video-status: POST /v2/post/publish/status/fetch/ (30 a
 *   minute per token) → status PROCESSING_UPLOAD | PROCESSING_DOWNLOAD | SEND_TO_USER_INBOX | PUBLISH_COMPLETE | FAILED,
 *   fail_reason, publicaly_available_post_id (sic), uploaded_bytes, downloaded_bytes;
 * - shared/reference/platform-apis-meta-tiktok-youtube.md §5, §7.1, §8: the error codes privacy_level_option_mismatch,
 *   unaudited_client_can_only_post_to_private_accounts, spam_risk_too_many_posts, url_ownership_unverified, and
 *   `FAILED` beside `error.code: 'ok'` (postiz-app issue 814); URLs must lie under a verified domain or prefix.
 * Choices of the fake (the docs are silent): HTTP 403 for spam_risk_too_many_posts, url_ownership_unverified and
 * unaudited_client_can_only_post_to_private_accounts, 400 for privacy_level_option_mismatch; OAuth errors answer 400
 * (invalid_client 401); the authorization code lives 10 minutes and is single-use; a refresh leaves earlier access
 * tokens alive until they expire; revoking either token kills every token of that grant, and an unknown token is
 * still 200; rate limits count per user (open_id) in a sliding minute, each endpoint its own bucket (inits: video and
 * photo apart), and count every authenticated call, valid or not; the daily post cap (per user, none by default)
 * counts publishes created in the last 24 hours and is also answered by creator_info; the unaudited check comes
 * before the privacy option check; video init takes FILE_UPLOAD only; upload PUTs need no Authorization; a chunk must
 * start where the received bytes end (else 416) and span exactly its chunk's bytes (else 400 invalid_params); upload
 * answers carry no body; the photo fetch happens during init (GET with Range, a TikTok-like user agent), and a bad
 * image does not fail the init but ends the publish FAILED (photo_pull_failed, file_format_check_failed for a type
 * other than image/jpeg or image/webp, picture_size_check_failed over 20 MB); processing moves only when polled
 * (`processingPolls` answers PROCESSING_UPLOAD / PROCESSING_DOWNLOAD, then the outcome), `postIdPolls` further
 * PUBLISH_COMPLETE answers carry an empty id array; MEDIA_UPLOAD photos end SEND_TO_USER_INBOX; post ids are kept below
 * 2^53 (real ones are 19-digit int64s) so JSON.parse reads them exactly; error answers have `data: {}` except 401s.
 * Faults a test plans are taken by the next matching request, in order. No timers: the clock is read on demand.
 */

export type TikTokPrivacyLevel = 'PUBLIC_TO_EVERYONE' | 'MUTUAL_FOLLOW_FRIENDS' | 'FOLLOWER_OF_CREATOR' | 'SELF_ONLY';
export type TikTokPublishStatus = 'PROCESSING_UPLOAD' | 'PROCESSING_DOWNLOAD' | 'SEND_TO_USER_INBOX' | 'PUBLISH_COMPLETE' | 'FAILED';

/** A TikTok account; the settings are live (assign to change what creator_info answers and init accepts). */
export interface TikTokUser {
  openId: string;
  unionId: string;
  username: string;
  displayName: string;
  avatarUrl: string;
  privacyLevelOptions: string[];
  commentDisabled: boolean;
  duetDisabled: boolean;
  stitchDisabled: boolean;
  maxVideoSeconds: number;
  /** Publishes allowed in 24 hours (spam_risk_too_many_posts beyond); null: no cap. */
  dailyPostCap: number | null;
}

export interface TikTokPost {
  publishId: string;
  userOpenId: string;
  mediaType: 'VIDEO' | 'PHOTO';
  postMode: 'DIRECT_POST' | 'MEDIA_UPLOAD';
  title: string;
  description: string;
  privacyLevel: string;
  disableComment: boolean;
  disableDuet: boolean;
  disableStitch: boolean;
  /** The video's bytes; empty for photos. */
  bytes: Buffer;
  photoUrls: string[];
  status: TikTokPublishStatus;
  /** Set when PUBLISH_COMPLETE (kept back from the answer for `postIdPolls` polls). */
  postId: string | null;
  failReason: string | null;
}

export interface TikTokPublish {
  publishId: string;
  userOpenId: string;
  mediaType: 'VIDEO' | 'PHOTO';
  /** FILE_UPLOAD only: the upload's id and token (in upload_url). */
  uploadId: string | null;
  videoSize: number;
  chunkSize: number;
  totalChunkCount: number;
  uploadedBytes: number;
  downloadedBytes: number;
  status: TikTokPublishStatus;
  /** The ledger entry, once the publish is committed (last byte arrived, or photo init). */
  post: TikTokPost | null;
}

export type TikTokAuthorization = Authorization<'openId'>;

export type TikTokRevocation = Revocation;

export interface TikTokFetchRecord {
  publishId: string;
  url: string;
  /** null when nothing answered. */
  status: number | null;
  contentType: string | null;
  bytes: number;
  /** The fail_reason it caused, or null. */
  failReason: string | null;
}

export type TikTokRecordedRequest = RecordedRequest;

/** token: POST /v2/oauth/token/; revoke: /v2/oauth/revoke/; user: GET /v2/user/info/; creator: creator_info/query;
 * init: video/init; upload: every PUT to an upload URL; status: status/fetch; photo: content/init. */
export type TikTokFaultTarget = 'token' | 'revoke' | 'user' | 'creator' | 'init' | 'upload' | 'status' | 'photo';

/** An `answer`'s body defaults to TikTok's for the status; a `commitThenDrop` on `upload` waits for the PUT that
 * completes the video. */
export type TikTokFault = Fault;

export interface TikTokFakeOptions extends FakeOptions {
  clientKey?: string;
  /** Status fetches that answer PROCESSING_* once the media is in, before the outcome; 2 by default. */
  processingPolls?: number;
  /** PUBLISH_COMPLETE answers with an empty publicaly_available_post_id before the id shows; 0 by default. */
  postIdPolls?: number;
  /** The app is not audited: creators may only post SELF_ONLY. false by default. */
  unaudited?: boolean;
  /** URL prefixes verified in the developer portal; null (the default) accepts any URL. */
  verifiedPrefixes?: string[] | null;
}

export interface TikTokFake extends Fake<TikTokUser, TikTokFaultTarget> {
  /** Stands for www.tiktok.com and open.tiktokapis.com alike. */
  url: string;
  clientKey: string;
  /** A TikTok account with default settings (all four privacy levels, 600 s, nothing disabled, no daily cap). */
  addUser(user: { username: string; displayName?: string }): TikTokUser;
  /** Tokens as a completed consent would give them (Herald's three scopes by default, comma-separated). */
  grant(user: TikTokUser, scope?: string): { accessToken: string; refreshToken: string };
  /** Video and photo init requests received (faulted and refused ones too). */
  initCalls(): number;
  /** The next publish created ends FAILED with this fail_reason (file_format_check_failed by default). */
  failNextPublish(reason?: string): void;
  /** Every publish still processing ends it at its next status fetch. */
  finishProcessing(): void;
  unaudited: boolean;
  processingPolls: number;
  postIdPolls: number;
  verifiedPrefixes: string[] | null;
  /** Committed publishes in order. */
  posts: TikTokPost[];
  publishes: Map<string, TikTokPublish>;
  /** Chunks received per publish id, in order. */
  chunks: Map<string, Buffer[]>;
  /** GETs of photo URLs. */
  fetches: TikTokFetchRecord[];
  authorizations: TikTokAuthorization[];
  revocations: TikTokRevocation[];
}

const HERALD_SCOPE = 'user.info.basic,video.publish,video.upload';
const ALL_PRIVACY: TikTokPrivacyLevel[] = ['PUBLIC_TO_EVERYONE', 'MUTUAL_FOLLOW_FRIENDS', 'FOLLOWER_OF_CREATOR', 'SELF_ONLY'];
const ACCESS_TTL_S = 7_200;
const REFRESH_TTL_S = 15_552_000;
const CODE_TTL_MS = 10 * 60_000;
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const MB = 1024 * 1024;
const MIN_CHUNK = 5 * MB;
const MAX_CHUNK = 64 * MB;
const MAX_LAST_CHUNK = 128 * MB;
const MAX_VIDEO = 4 * 1024 * MB;
const MAX_PHOTO = 20 * MB;
const PHOTO_TYPES = ['image/jpeg', 'image/webp'];
const VIDEO_TYPES = ['video/mp4', 'video/quicktime', 'video/webm'];
const FETCH_USER_AGENT = 'Mozilla/5.0 (compatible; TikTokContentFetcher/1.0; herald-test-fake)';
const LIMITS = { init: 6, photo: 6, creator: 20, status: 30 } as const;

const TOKEN_INVALID_MESSAGE = 'The access token is invalid or not found in the request.';

interface Code {
  openId: string;
  redirectUri: string;
  scope: string[];
}

interface PublishState {
  uploadToken: string | null;
  pollsLeft: number;
  idPollsLeft: number;
  plannedFailure: string | null;
  postMode: 'DIRECT_POST' | 'MEDIA_UPLOAD';
  meta: Omit<TikTokPost, 'publishId' | 'userOpenId' | 'mediaType' | 'postMode' | 'bytes' | 'status' | 'postId' | 'failReason'>;
}

export async function startTikTokFake(options: TikTokFakeOptions = {}): Promise<TikTokFake> {
  const clientKey = options.clientKey ?? `aw${base36(14)}`;
  const clientSecret = options.clientSecret ?? base62(32);
  const state = createFakeState<TikTokFaultTarget>(options.now);
  const { now, recorder, tokens } = state;

  const users = new Map<string, TikTokUser>();
  const posts: TikTokPost[] = [];
  const publishes = new Map<string, TikTokPublish>();
  const states = new Map<string, PublishState>();
  const chunks = new Map<string, Buffer[]>();
  const fetches: TikTokFetchRecord[] = [];
  const revocations: TikTokRevocation[] = [];
  const codes = new CodeStore<Code>(now, CODE_TTL_MS);
  const calls = new Map<string, number[]>();
  const publishTimes = new Map<string, number[]>();
  const plannedFailures: string[] = [];
  let refreshCount = 0;
  let initCount = 0;
  let nextPostId = 7_000_000_000_000_000 + Math.floor(Math.random() * 1_000_000_000);
  let baseUrl = '';
  const settings = {
    unaudited: options.unaudited ?? false,
    processingPolls: options.processingPolls ?? 2,
    postIdPolls: options.postIdPolls ?? 0,
    verifiedPrefixes: options.verifiedPrefixes ?? null,
  };

  const logId = () => {
    const d = new Date(now());
    const p = (n: number, w = 2) => String(n).padStart(w, '0');
    const stamp = `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`;
    return stamp + randomBytes(10).toString('hex').toUpperCase();
  };
  const ok = (data: unknown): Answer => ({ status: 200, body: { data, error: { code: 'ok', message: '', log_id: logId() } } });
  const apiError = (status: number, code: string, message: string): Answer => ({
    status,
    body: status === 401 ? { error: { code, message, log_id: logId() } } : { data: {}, error: { code, message, log_id: logId() } },
  });
  const oauthError = (error: string, description: string, status = error === 'invalid_client' ? 401 : 400): Answer => ({
    status,
    body: { error, error_description: description, log_id: logId() },
  });

  const app = await createFakeApp({
    bodyLimit: MAX_LAST_CHUNK + MB,
    jsonError: 'The request body is not valid JSON.',
    rawBodies: true,
    errorBody: (status, message) => apiError(status, status < 500 ? 'invalid_params' : 'internal_error', message).body,
    notFoundBody: () => apiError(404, 'not_found', 'The path is not served by the fake.').body,
  });

  const defaultFaultBody = (target: TikTokFaultTarget, status: number): unknown => {
    if (target === 'token' || target === 'revoke') {
      if (status === 401) return oauthError('invalid_client', 'Client key or secret is invalid.').body;
      if (status >= 500) return oauthError('internal_error', 'Internal error.', status).body;
      return oauthError('invalid_grant', 'Refresh token is invalid or expired.').body;
    }
    if (status === 401) return apiError(401, 'access_token_invalid', TOKEN_INVALID_MESSAGE).body;
    if (status === 403) return apiError(403, 'spam_risk_too_many_posts', 'The user has reached the daily post cap.').body;
    if (status === 429) return apiError(429, 'rate_limit_exceeded', 'The API rate limit was exceeded. Please try again later.').body;
    if (status >= 500) return apiError(status, 'internal_error', 'Internal error.').body;
    return apiError(status, 'invalid_params', 'One or more fields in the request are invalid.').body;
  };

  const route = (
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    target: TikTokFaultTarget,
    handler: (req: FastifyRequest, body: unknown) => Answer | Promise<Answer>,
  ) =>
    fakeRoute(app, state, {
      method,
      url: path,
      target,
      admit: () => {
        if (target === 'init' || target === 'photo') initCount += 1;
      },
      faultAnswer: (fault) => plannedAnswer(fault, (status) => defaultFaultBody(target, status)),
      dropWhenMade: target === 'upload',
      handle: handler,
    });
  /** Counts the call; whether it is over the per-minute limit. */
  const limited = (openId: string, bucket: keyof typeof LIMITS) => {
    const key = `${bucket}:${openId}`;
    const since = now() - MINUTE_MS;
    const times = (calls.get(key) ?? []).filter((t) => t > since);
    times.push(now());
    calls.set(key, times);
    return times.length > LIMITS[bucket];
  };

  const postsToday = (openId: string) => {
    const since = now() - DAY_MS;
    return (publishTimes.get(openId) ?? []).filter((t) => t > since).length;
  };
  const overDailyCap = (user: TikTokUser) => user.dailyPostCap !== null && postsToday(user.openId) >= user.dailyPostCap;
  const optionsOf = (user: TikTokUser) => (settings.unaudited ? ['SELF_ONLY'] : [...user.privacyLevelOptions]);

  // --- Tokens ----------------------------------------------------------------------------------

  // --- Tokens ----------------------------------------------------------------------------------

  /** The caller, or the answer to give instead. */
  const authenticate = (req: FastifyRequest, anyOf: string[]): TikTokUser | Answer => {
    const grant = tokens.bearer(req);
    const user = grant === undefined ? undefined : users.get(grant.subject);
    if (grant === undefined || user === undefined) return apiError(401, 'access_token_invalid', TOKEN_INVALID_MESSAGE);
    if (!anyOf.some((s) => grant.scope.includes(s)))
      return apiError(401, 'scope_not_authorized', 'The user did not authorize the scope required for completing this request.');
    return user;
  };

  const issueTokens = (openId: string, scope: string[], grant?: number) => {
    const access = tokens.issue('access', `act.${base62(72)}!${randomDigits(4)}.va`, { subject: openId, scope, ttlMs: ACCESS_TTL_S * 1000, grant });
    const refresh = tokens.issue('refresh', `rft.${base62(72)}!${randomDigits(4)}.va`, {
      subject: openId,
      scope,
      ttlMs: REFRESH_TTL_S * 1000,
      grant: access.grant,
    });
    return { accessToken: access.token, refreshToken: refresh.token };
  };

  const tokenAnswer = (openId: string, issued: { accessToken: string; refreshToken: string }, scope: string[]): Answer => ({
    status: 200,
    body: {
      access_token: issued.accessToken,
      expires_in: ACCESS_TTL_S,
      open_id: openId,
      refresh_expires_in: REFRESH_TTL_S,
      refresh_token: issued.refreshToken,
      scope: scope.join(','),
      token_type: 'Bearer',
    },
  });

  const consent = installConsentPage({
    app,
    path: '/v2/auth/authorize/',
    recorder,
    who: 'openId',
    firstSubject: () => [...users.keys()][0],
    check: (query) =>
      query.client_key !== clientKey
        ? 'client_key'
        : query.response_type !== 'code'
          ? 'response_type must be code'
          : query.redirect_uri === undefined || !/^https?:\/\//.test(query.redirect_uri)
            ? 'redirect_uri'
            : scopeOf(query).length === 0
              ? 'scope'
              : null,
    errorPage: (reason) => `<p>Something went wrong</p><!-- ${reason} -->`,
    nobody: { reason: 'no account to consent as (addUser first)', page: '<p>No account is signed in to the fake (call addUser).</p>' },
    refused: (query) => ({ error: 'access_denied', error_description: 'The user denied the authorization request.', ...stateOf(query) }),
    approved: (query, openId) => {
      const code = `${base62(64)}*0!${randomDigits(4)}.va`;
      const scope = scopeOf(query);
      codes.issue(code, { openId, redirectUri: query.redirect_uri!, scope });
      return { code, scopes: scope.join(','), ...stateOf(query) };
    },
  });

  route('POST', '/v2/oauth/token/', 'token', (_req, body) => {
    const form = stringFields(body);
    if (form.client_key !== clientKey || form.client_secret !== clientSecret) return oauthError('invalid_client', 'Client key or secret is invalid.');
    if (form.grant_type === 'authorization_code') {
      const code = codes.redeem(form.code);
      if (code === undefined) return oauthError('invalid_grant', 'Authorization code is expired.');
      if (form.redirect_uri !== code.redirectUri) return oauthError('invalid_grant', 'The redirect_uri does not match the authorization request.');
      return tokenAnswer(code.openId, issueTokens(code.openId, code.scope), code.scope);
    }
    if (form.grant_type === 'refresh_token') {
      const old = tokens.live('refresh', form.refresh_token);
      if (old === undefined) return oauthError('invalid_grant', 'Refresh token is invalid or expired.');
      old.dead = true;
      refreshCount += 1;
      return tokenAnswer(old.subject, issueTokens(old.subject, old.scope, old.grant), old.scope);
    }
    if (form.grant_type === undefined) return oauthError('invalid_request', 'The request parameters are malformed.');
    return oauthError('unsupported_grant_type', `Unsupported grant_type: ${form.grant_type}`);
  });

  route('POST', '/v2/oauth/revoke/', 'revoke', (_req, body) => {
    const form = stringFields(body);
    if (form.client_key !== clientKey || form.client_secret !== clientSecret) return oauthError('invalid_client', 'Client key or secret is invalid.');
    const token = form.token ?? '';
    const found = tokens.tokens.get(token);
    revocations.push({ token, kind: found?.kind ?? 'unknown' });
    if (found !== undefined) tokens.kill((t) => t.grant === found.grant);
    return { status: 200, body: {} };
  });

  // --- User and creator info -------------------------------------------------------------------

  route('GET', '/v2/user/info/', 'user', (req) => {
    const user = authenticate(req, ['user.info.basic']);
    if (isAnswer(user)) return user;
    const fields = (stringFields(req.query).fields ?? '').split(',').filter((f) => f !== '');
    if (fields.length === 0) return apiError(400, 'invalid_params', 'fields is required.');
    const all: Record<string, string> = {
      open_id: user.openId,
      union_id: user.unionId,
      avatar_url: user.avatarUrl,
      display_name: user.displayName,
      username: user.username,
    };
    const unknown = fields.find((f) => !(f in all));
    if (unknown !== undefined) return apiError(400, 'invalid_params', `Invalid field: ${unknown}`);
    return ok({ user: Object.fromEntries(fields.map((f) => [f, all[f]])) });
  });

  route('POST', '/v2/post/publish/creator_info/query/', 'creator', (req) => {
    const user = authenticate(req, ['video.publish']);
    if (isAnswer(user)) return user;
    if (limited(user.openId, 'creator')) return apiError(429, 'rate_limit_exceeded', 'The API rate limit was exceeded. Please try again later.');
    if (overDailyCap(user)) return apiError(403, 'spam_risk_too_many_posts', 'The user has reached the daily post cap.');
    return ok({
      creator_avatar_url: user.avatarUrl,
      creator_username: user.username,
      creator_nickname: user.displayName,
      privacy_level_options: optionsOf(user),
      comment_disabled: user.commentDisabled,
      duet_disabled: user.duetDisabled,
      stitch_disabled: user.stitchDisabled,
      max_video_post_duration_sec: user.maxVideoSeconds,
    });
  });

  // --- Publishing ------------------------------------------------------------------------------

  /** The answer refusing this privacy level, or null. */
  const privacyRefusal = (user: TikTokUser, level: unknown): Answer | null => {
    if (typeof level !== 'string' || !(ALL_PRIVACY as string[]).includes(level)) return apiError(400, 'invalid_params', 'privacy_level is invalid.');
    if (settings.unaudited && level !== 'SELF_ONLY')
      return apiError(403, 'unaudited_client_can_only_post_to_private_accounts', 'Unaudited clients can only post to private accounts.');
    if (!user.privacyLevelOptions.includes(level))
      return apiError(400, 'privacy_level_option_mismatch', 'privacy_level is not one of the privacy_level_options of the creator.');
    return null;
  };

  const newPublish = (
    user: TikTokUser,
    publish: Omit<TikTokPublish, 'publishId' | 'userOpenId' | 'post'>,
    state: Omit<PublishState, 'pollsLeft' | 'idPollsLeft' | 'plannedFailure'>,
    prefix: string,
  ) => {
    const publishId = `${prefix}~v2-1.${randomDigits(19)}`;
    const entry: TikTokPublish = { publishId, userOpenId: user.openId, post: null, ...publish };
    publishes.set(publishId, entry);
    chunks.set(publishId, []);
    states.set(publishId, {
      ...state,
      pollsLeft: settings.processingPolls,
      idPollsLeft: settings.postIdPolls,
      plannedFailure: plannedFailures.shift() ?? null,
    });
    publishTimes.set(user.openId, [...(publishTimes.get(user.openId) ?? []), now()]);
    return entry;
  };

  const commit = (publish: TikTokPublish, bytes: Buffer) => {
    const state = states.get(publish.publishId)!;
    const post: TikTokPost = {
      publishId: publish.publishId,
      userOpenId: publish.userOpenId,
      mediaType: publish.mediaType,
      postMode: state.postMode,
      ...state.meta,
      bytes,
      status: publish.status,
      postId: null,
      failReason: null,
    };
    publish.post = post;
    posts.push(post);
  };

  const boolField = (value: unknown) => value === true;

  route('POST', '/v2/post/publish/video/init/', 'init', (req, body) => {
    const user = authenticate(req, ['video.publish']);
    if (isAnswer(user)) return user;
    if (limited(user.openId, 'init')) return apiError(429, 'rate_limit_exceeded', 'The API rate limit was exceeded. Please try again later.');
    const postInfo = isObject(body) && isObject(body.post_info) ? body.post_info : undefined;
    const source = isObject(body) && isObject(body.source_info) ? body.source_info : undefined;
    if (postInfo === undefined || source === undefined) return apiError(400, 'invalid_params', 'post_info and source_info are required.');
    const title = postInfo.title ?? '';
    if (typeof title !== 'string' || title.length > 2200) return apiError(400, 'invalid_params', 'title must be a string of at most 2200 UTF-16 code units.');
    if (source.source !== 'FILE_UPLOAD') return apiError(400, 'invalid_params', 'The fake takes source FILE_UPLOAD only for video.');
    const { video_size: size, chunk_size: chunk, total_chunk_count: count } = source;
    if (!isCount(size) || !isCount(chunk) || !isCount(count) || size === 0)
      return apiError(400, 'invalid_params', 'video_size, chunk_size and total_chunk_count must be positive integers.');
    const chunkRule = chunkProblem(size, chunk, count);
    if (chunkRule !== null) return apiError(400, 'invalid_params', chunkRule);
    const refusal = privacyRefusal(user, postInfo.privacy_level);
    if (refusal !== null) return refusal;
    if (overDailyCap(user)) return apiError(403, 'spam_risk_too_many_posts', 'The user has reached the daily post cap.');
    const uploadId = randomDigits(19);
    const uploadToken = base62(32);
    const publish = newPublish(
      user,
      {
        mediaType: 'VIDEO',
        uploadId,
        videoSize: size,
        chunkSize: chunk,
        totalChunkCount: count,
        uploadedBytes: 0,
        downloadedBytes: 0,
        status: 'PROCESSING_UPLOAD',
      },
      {
        uploadToken,
        postMode: 'DIRECT_POST',
        meta: {
          title,
          description: '',
          privacyLevel: String(postInfo.privacy_level),
          disableComment: boolField(postInfo.disable_comment),
          disableDuet: boolField(postInfo.disable_duet),
          disableStitch: boolField(postInfo.disable_stitch),
          photoUrls: [],
        },
      },
      'v_pub_file',
    );
    return ok({ publish_id: publish.publishId, upload_url: `${baseUrl}/upload/?upload_id=${uploadId}&upload_token=${uploadToken}` });
  });

  route('PUT', '/upload/', 'upload', (req, body) => {
    const query = stringFields(req.query);
    const publish = [...publishes.values()].find((p) => p.uploadId !== null && p.uploadId === query.upload_id);
    if (publish === undefined) return apiError(404, 'invalid_params', 'The upload does not exist.');
    if (states.get(publish.publishId)?.uploadToken !== query.upload_token) return apiError(403, 'invalid_params', 'The upload token is invalid.');
    if (publish.uploadedBytes === publish.videoSize) return apiError(400, 'invalid_params', 'The upload is already complete.');
    const mime = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (!VIDEO_TYPES.includes(mime)) return apiError(400, 'invalid_file_upload', `Content-Type ${mime || '(none)'} is not a video type.`);
    const bytes = Buffer.isBuffer(body) ? body : Buffer.alloc(0);
    const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec((header(req, 'content-range') ?? '').trim());
    if (range === null) return apiError(400, 'invalid_params', 'Content-Range must be bytes {first}-{last}/{total}.');
    const start = Number(range[1]);
    const end = Number(range[2]);
    if (Number(range[3]) !== publish.videoSize)
      return apiError(400, 'invalid_params', `Content-Range total ${range[3]} is not video_size ${publish.videoSize}.`);
    if (end < start || end - start + 1 !== bytes.length)
      return apiError(400, 'invalid_params', `Content-Range ${range[0]} does not match the ${bytes.length} bytes sent.`);
    if (start !== publish.uploadedBytes) return { status: 416, headers: { 'content-range': `bytes */${publish.videoSize}` } };
    const index = Math.round(start / publish.chunkSize);
    const last = index === publish.totalChunkCount - 1;
    const expectedEnd = last ? publish.videoSize - 1 : start + publish.chunkSize - 1;
    if (end !== expectedEnd) return apiError(400, 'invalid_params', `Chunk ${index + 1} must end at byte ${expectedEnd}.`);
    chunks.get(publish.publishId)!.push(bytes);
    publish.uploadedBytes += bytes.length;
    if (!last) return { status: 206 };
    commit(publish, Buffer.concat(chunks.get(publish.publishId)!));
    return { status: 201, made: true };
  });

  route('POST', '/v2/post/publish/content/init/', 'photo', async (req, body) => {
    const mode = isObject(body) ? body.post_mode : undefined;
    const user = authenticate(req, mode === 'MEDIA_UPLOAD' ? ['video.upload'] : ['video.publish']);
    if (isAnswer(user)) return user;
    if (limited(user.openId, 'photo')) return apiError(429, 'rate_limit_exceeded', 'The API rate limit was exceeded. Please try again later.');
    const postInfo = isObject(body) && isObject(body.post_info) ? body.post_info : undefined;
    const source = isObject(body) && isObject(body.source_info) ? body.source_info : undefined;
    if (postInfo === undefined || source === undefined) return apiError(400, 'invalid_params', 'post_info and source_info are required.');
    if (!isObject(body) || body.media_type !== 'PHOTO') return apiError(400, 'invalid_params', 'media_type must be PHOTO.');
    if (mode !== 'DIRECT_POST' && mode !== 'MEDIA_UPLOAD') return apiError(400, 'invalid_params', 'post_mode must be DIRECT_POST or MEDIA_UPLOAD.');
    const title = postInfo.title ?? '';
    const description = postInfo.description ?? '';
    if (typeof title !== 'string' || title.length > 90) return apiError(400, 'invalid_params', 'title must be at most 90 characters.');
    if (typeof description !== 'string' || description.length > 4000) return apiError(400, 'invalid_params', 'description must be at most 4000 characters.');
    if (source.source !== 'PULL_FROM_URL') return apiError(400, 'invalid_params', 'Photos take source PULL_FROM_URL only.');
    const images = source.photo_images;
    if (!Array.isArray(images) || images.length < 1 || images.length > 35 || !images.every((u): u is string => typeof u === 'string' && u !== ''))
      return apiError(400, 'invalid_params', 'photo_images must hold 1 to 35 URLs.');
    const cover = source.photo_cover_index ?? 0;
    if (!isCount(cover) || cover >= images.length) return apiError(400, 'invalid_params', 'photo_cover_index is out of range.');
    if (mode === 'DIRECT_POST') {
      const refusal = privacyRefusal(user, postInfo.privacy_level);
      if (refusal !== null) return refusal;
    }
    const prefixes = settings.verifiedPrefixes;
    if (prefixes !== null && !images.every((u) => prefixes.some((p) => u.startsWith(p))))
      return apiError(403, 'url_ownership_unverified', 'Please review our URL ownership verification rules.');
    if (overDailyCap(user)) return apiError(403, 'spam_risk_too_many_posts', 'The user has reached the daily post cap.');
    const publish = newPublish(
      user,
      {
        mediaType: 'PHOTO',
        uploadId: null,
        videoSize: 0,
        chunkSize: 0,
        totalChunkCount: 0,
        uploadedBytes: 0,
        downloadedBytes: 0,
        status: 'PROCESSING_DOWNLOAD',
      },
      {
        uploadToken: null,
        postMode: mode,
        meta: {
          title,
          description,
          privacyLevel: typeof postInfo.privacy_level === 'string' ? postInfo.privacy_level : '',
          disableComment: boolField(postInfo.disable_comment),
          disableDuet: false,
          disableStitch: false,
          photoUrls: [...images],
        },
      },
      'p_pub_url',
    );
    commit(publish, Buffer.alloc(0));
    const state = states.get(publish.publishId)!;
    for (const url of images) {
      const fetched = await fetchPhoto(url);
      fetches.push({ publishId: publish.publishId, ...fetched });
      publish.downloadedBytes += fetched.bytes;
      if (fetched.failReason !== null && state.plannedFailure === null) state.plannedFailure = fetched.failReason;
    }
    return ok({ publish_id: publish.publishId });
  });

  /** One poll's worth of processing. */
  const poll = (publish: TikTokPublish) => {
    const state = states.get(publish.publishId)!;
    const post = publish.post;
    if (post === null) return; // still uploading
    if (publish.status === 'PROCESSING_UPLOAD' || publish.status === 'PROCESSING_DOWNLOAD') {
      if (state.pollsLeft > 0) {
        state.pollsLeft -= 1;
      } else if (state.plannedFailure !== null) {
        publish.status = 'FAILED';
        post.failReason = state.plannedFailure;
      } else if (state.postMode === 'MEDIA_UPLOAD') {
        publish.status = 'SEND_TO_USER_INBOX';
      } else {
        publish.status = 'PUBLISH_COMPLETE';
        post.postId = String(nextPostId++);
      }
    } else if (publish.status === 'PUBLISH_COMPLETE' && state.idPollsLeft > 0) {
      state.idPollsLeft -= 1;
    }
    post.status = publish.status;
  };

  route('POST', '/v2/post/publish/status/fetch/', 'status', (req, body) => {
    const user = authenticate(req, ['video.publish', 'video.upload']);
    if (isAnswer(user)) return user;
    if (limited(user.openId, 'status')) return apiError(429, 'rate_limit_exceeded', 'The API rate limit was exceeded. Please try again later.');
    const id = isObject(body) ? body.publish_id : undefined;
    const publish = typeof id === 'string' ? publishes.get(id) : undefined;
    if (publish === undefined || publish.userOpenId !== user.openId) return apiError(400, 'invalid_params', 'publish_id is invalid.');
    poll(publish);
    const state = states.get(publish.publishId)!;
    const postId = publish.status === 'PUBLISH_COMPLETE' && state.idPollsLeft === 0 ? (publish.post?.postId ?? null) : null;
    return ok({
      status: publish.status,
      ...(publish.status === 'FAILED' ? { fail_reason: publish.post?.failReason ?? 'internal' } : {}),
      publicaly_available_post_id: postId === null ? [] : [Number(postId)],
      ...(publish.mediaType === 'VIDEO' ? { uploaded_bytes: publish.uploadedBytes } : { downloaded_bytes: publish.downloadedBytes }),
    });
  });

  baseUrl = await listenLocal(app);

  const known = (user: TikTokUser) => {
    if (!users.has(user.openId)) throw new Error(`no user ${user.username}`);
  };

  const fake: Omit<TikTokFake, keyof typeof settings> = {
    ...fakeControls(app, state, consent),
    url: baseUrl,
    clientKey,
    clientSecret,
    addUser({ username, displayName }) {
      const user: TikTokUser = {
        openId: `-000${base62(40)}`,
        unionId: `-000${base62(40)}`,
        username,
        displayName: displayName ?? username,
        avatarUrl: `${baseUrl}/avatar/${encodeURIComponent(username)}.jpeg`,
        privacyLevelOptions: [...ALL_PRIVACY],
        commentDisabled: false,
        duetDisabled: false,
        stitchDisabled: false,
        maxVideoSeconds: 600,
        dailyPostCap: null,
      };
      users.set(user.openId, user);
      return user;
    },
    consentAs(user) {
      known(user);
      consent.consentAs(user.openId);
    },
    grant(user, scope = HERALD_SCOPE) {
      known(user);
      return issueTokens(user.openId, scope.split(','));
    },
    refreshes: () => refreshCount,
    initCalls: () => initCount,
    finishProcessing() {
      for (const state of states.values()) state.pollsLeft = 0;
    },
    failNextPublish(reason = 'file_format_check_failed') {
      plannedFailures.push(reason);
    },
    posts,
    publishes,
    chunks,
    fetches,
    authorizations: consent.authorizations,
    revocations,
  };
  return withSettings(fake, settings, ['unaudited', 'processingPolls', 'postIdPolls', 'verifiedPrefixes']);
}

/** The chunk rule video_size / chunk_size / total_chunk_count break, or null. */
function chunkProblem(size: number, chunk: number, count: number): string | null {
  if (size > MAX_VIDEO) return 'video_size is over 4 GB.';
  if (size < MIN_CHUNK) return chunk === size && count === 1 ? null : 'A video under 5 MB goes as one chunk: chunk_size = video_size, total_chunk_count = 1.';
  if (chunk < MIN_CHUNK || chunk > MAX_CHUNK) return 'chunk_size must be between 5 MB and 64 MB.';
  if (chunk > size) return 'chunk_size is larger than video_size.';
  if (count !== Math.floor(size / chunk)) return `total_chunk_count must be floor(video_size / chunk_size) = ${Math.floor(size / chunk)}.`;
  if (count > 1000) return 'At most 1000 chunks.';
  if (size - (count - 1) * chunk > MAX_LAST_CHUNK) return 'The last chunk would be over 128 MB.';
  return null;
}

/** GETs a photo as TikTok's puller would; what it found and the fail_reason it causes. */
async function fetchPhoto(url: string): Promise<Omit<TikTokFetchRecord, 'publishId'>> {
  let response: Response;
  try {
    response = await fetch(url, {
      redirect: 'manual',
      signal: AbortSignal.timeout(5_000),
      headers: { 'user-agent': FETCH_USER_AGENT, range: `bytes=0-${MAX_PHOTO}`, accept: '*/*', 'accept-encoding': 'identity' },
    });
  } catch {
    return { url, status: null, contentType: null, bytes: 0, failReason: 'photo_pull_failed' };
  }
  const contentType = response.headers.get('content-type');
  const mime = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  let bytes = 0;
  try {
    bytes = (await response.arrayBuffer()).byteLength;
  } catch {
    return { url, status: response.status, contentType, bytes: 0, failReason: 'photo_pull_failed' };
  }
  const failReason =
    response.status !== 200 && response.status !== 206
      ? 'photo_pull_failed'
      : !PHOTO_TYPES.includes(mime)
        ? 'file_format_check_failed'
        : bytes > MAX_PHOTO
          ? 'picture_size_check_failed'
          : null;
  return { url, status: response.status, contentType, bytes, failReason };
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/** The consent's scopes, comma-separated as TikTok takes them. */
function scopeOf(query: Record<string, string>): string[] {
  return (query.scope ?? '').split(',').filter((s) => s !== '');
}

function base36(length: number): string {
  return [...randomBytes(length)].map((b) => (b % 36).toString(36)).join('');
}
