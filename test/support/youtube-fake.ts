import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  base62,
  basicCredentials,
  CodeStore,
  createFakeApp,
  createFakeState,
  fakeControls,
  fakeRoute,
  formDecode,
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
  type IssuedToken,
  type RecordedRequest,
  type Revocation,
} from './fake-kit.js';

/**
 * An in-process Google OAuth 2.0 and YouTube Data API v3, written from their documentation, for the calls Herald
 * makes. `url` stands for https://accounts.google.com (consent), https://oauth2.googleapis.com (token, revoke) and
 * https://www.googleapis.com (the API and uploads) alike: their paths do not collide.
 * - developers.google.com/identity/protocols/oauth2/web-server: GET /o/oauth2/v2/auth (client_id, redirect_uri,
 *   response_type=code, scope, access_type=offline, prompt, state, code_challenge, code_challenge_method S256|plain),
 *   back to redirect_uri with `code`, `state`, `scope` (or `error=access_denied`); POST /token (form; client
 *   credentials in the body or as HTTP Basic) → `{access_token, expires_in: 3599, refresh_token (only with
 *   access_type=offline), scope, token_type: 'Bearer'}`; a refresh answers without `refresh_token`; POST /revoke
 *   (`token` in the query or the form) → 200, 400 `invalid_token` for an unknown token, and revoking either token of a
 *   grant revokes both;
 * - developers.google.com/identity/protocols/oauth2 ("Refresh token expiration"): refresh tokens of an External app in
 *   "Testing" publishing status die after 7 days (`testingConsent`); `invalid_grant` "Token has been expired or revoked.";
 * - developers.google.com/youtube/v3/guides/using_resumable_upload_protocol: POST
 *   /upload/youtube/v3/videos?uploadType=resumable (X-Upload-Content-Length, X-Upload-Content-Type video/* or
 *   application/octet-stream, a video resource as JSON) → 200 + absolute `Location`; PUT <Location> with
 *   `Content-Range: bytes a-b/N` (chunks other than the last a multiple of 256 KiB) → 308 + `Range: bytes=0-<last>` (no
 *   Range when nothing arrived) while incomplete, 201 + the video resource once the last byte arrives; probe
 *   `Content-Range: bytes *\/N` with no body; 404 once the session is gone;
 * - developers.google.com/youtube/v3/docs/videos/insert and /docs/videos (resource): scopes youtube.upload | youtube |
 *   youtubepartner | youtube.force-ssl; title ≤ 100 characters without < or >, description ≤ 5,000 bytes without < or >,
 *   tags ≤ 500 characters counting the commas between them and 2 quotes around a tag with a space; publishAt only with
 *   privacyStatus private; errors invalidTitle, invalidDescription, invalidTags, invalidCategoryId, invalidPublishAt,
 *   invalidVideoMetadata, uploadLimitExceeded (400); status.uploadStatus uploaded|processed|failed|rejected|deleted,
 *   failureReason, rejectionReason; processingDetails.processingStatus processing|succeeded|failed|terminated;
 * - developers.google.com/youtube/v3/determine_quota_cost: 100 videos.insert calls a day per project, in their own
 *   bucket, reset at midnight Pacific (`quotaExceeded`, 403, domain youtube.quota); getting-started: even invalid
 *   requests are charged;
 * - developers.google.com/youtube/v3/docs/channels/list (mine=true, contentDetails.relatedPlaylists.uploads),
 *   /docs/playlistItems/list (maxResults 0–50, default 5; playlistNotFound 404), /docs/videos/list (unknown ids left
 *   out), /docs/commentThreads/insert (scope youtube.force-ssl; channelOrVideoIdMissing, commentTextRequired,
 *   commentTextTooLong, videoNotFound 404), /docs/errors (401 authError "Invalid Credentials", 403
 *   insufficientPermissions, quotaExceeded);
 * - YouTube developer news, quoted in GNOME/shotwell#5019: a per-channel 24-hour upload limit answers 400
 *   uploadLimitExceeded.
 * Choices of the fake (the docs are silent): a comment on a made-for-kids video is refused 403 `commentsDisabled`
 * (domain youtube.commentThread), on an unknown, failed or rejected video 404 `videoNotFound`; a comment is allowed as
 * soon as the video exists (processed or not); commentThreads.insert does not require snippet.channelId; the
 * per-channel limit counts sessions started in the last 24 hours (`channelUploadLimit`, 1,000 by default); the quota
 * bucket counts every authenticated videos.insert call, valid or not; a session lives 7 days (`sessionTtlMs`) and its
 * PUTs need no Authorization; a chunk must start exactly at the received offset (no overlap, no gap) and the chunk
 * error body is the fake's; once a session has made its video, any PUT to it (probe or not) answers 201 with the
 * video; a wrong X-Upload-Content-Type answers 400 `badContent` (Google's upload service wording); the authorization
 * code lives 10 minutes and is single-use; every bad code, verifier or dead refresh token answers `invalid_grant`
 * "Token has been expired or revoked."; a consent with access_type=offline always issues a new refresh token;
 * processing moves only when polled (`videoPolls` answers `uploaded`/`processing`, then `processed`/`succeeded` or the
 * planned failure: `failed`/`failed`, or `rejected`/`succeeded`); the uploads playlist lists every video made, newest
 * first, without paging, `videoPublishedAt` only for a video that is not private; other channels see only public videos.
 * Faults a test plans are taken by the next matching request, in order. No timers: the clock is read on demand.
 */

export interface YouTubeChannel {
  /** `UC` + 22 characters. */
  id: string;
  title: string;
  customUrl?: string;
  /** `UU` + the same 22 characters. */
  uploadsPlaylistId: string;
}

/** A Google account; its first channel is the one tokens act for. */
export interface YouTubeUser {
  id: string;
  name: string;
  channel: YouTubeChannel;
}

export interface YouTubeComment {
  id: string;
  text: string;
}

export type UploadStatus = 'uploaded' | 'processed' | 'failed' | 'rejected';

export interface YouTubeVideo {
  /** 11 characters. */
  id: string;
  channelId: string;
  title: string;
  description: string;
  tags: string[];
  categoryId: string;
  privacyStatus: 'private' | 'public' | 'unlisted';
  publishAt: string | null;
  madeForKids: boolean;
  bytes: Buffer;
  mime: string;
  uploadStatus: UploadStatus;
  processingStatus: 'processing' | 'succeeded' | 'failed';
  failureReason: string | null;
  rejectionReason: string | null;
  comments: YouTubeComment[];
  /** ISO 8601, by the fake's clock, when the last byte arrived. */
  publishedAt: string;
}

export interface YouTubeSession {
  channelId: string;
  /** X-Upload-Content-Length. */
  total: number;
  /** Bytes received so far. */
  received: number;
  videoId: string | null;
  /** Answers 404 from now on. */
  expired: boolean;
}

export type YouTubeAuthorization = Authorization<'channelId'>;

export type YouTubeRevocation = Revocation;

export type YouTubeRecordedRequest = RecordedRequest;

/** token: POST /token; revoke: POST /revoke; channels: GET channels; insert: POST (session start); upload: every PUT to
 * a session (probes too); videos: GET videos; playlist: GET playlistItems; comment: POST commentThreads. */
export type YouTubeFaultTarget = 'token' | 'revoke' | 'channels' | 'insert' | 'upload' | 'videos' | 'playlist' | 'comment';

/** An `answer`'s body defaults to Google's for the status. */
export type YouTubeFault = Fault;

export interface YouTubeFakeOptions extends FakeOptions {
  clientId?: string;
  /** videos.list polls that answer `uploaded` before processing ends; 2 by default. */
  videoPolls?: number;
  /** videos.insert calls a Pacific day for the project; 100 by default. */
  uploadQuota?: number;
  /** Sessions a channel may start in 24 hours; 1,000 by default. */
  channelUploadLimit?: number;
  /** Refresh tokens die 7 days after issue (consent screen in "Testing"); false by default. */
  testingConsent?: boolean;
  /** How long an upload session lives; 7 days by default. */
  sessionTtlMs?: number;
}

export interface YouTubeFake extends Fake<YouTubeUser, YouTubeFaultTarget> {
  /** Stands for accounts.google.com, oauth2.googleapis.com and www.googleapis.com alike. */
  url: string;
  clientId: string;
  /** A Google account with one channel named after it. */
  addUser(user: { name: string; customUrl?: string }): YouTubeUser;
  /** Another channel of the account: channels.list with mine=true lists it after the first; uploads still go to the first. */
  addChannel(user: YouTubeUser, channel: { title: string; customUrl?: string }): YouTubeChannel;
  /** Tokens as a completed offline consent would give them. */
  grant(user: YouTubeUser, scope?: string): { accessToken: string; refreshToken: string };
  /** The user removes the app's access: every token of theirs stops working. */
  revokeApp(user: YouTubeUser): void;
  /** The session answers 404 from now on. */
  expireSession(id: string): void;
  /** The next video made ends `failed` with this failureReason (codec, conversion, emptyFile, invalidFile, tooSmall,
   * uploadAborted) or `rejected` with this rejectionReason (anything else: duplicate, copyright, length, ...). */
  failNextVideo(reason?: string): void;
  /** Every video still processing ends it at its next poll. */
  finishProcessing(): void;
  testingConsent: boolean;
  videoPolls: number;
  uploadQuota: number;
  channelUploadLimit: number;
  /** Videos in creation order. */
  videos: YouTubeVideo[];
  sessions: Map<string, YouTubeSession>;
  /** PUT requests to session URLs, probes included. */
  readonly putCalls: number;
  authorizations: YouTubeAuthorization[];
  revocations: YouTubeRevocation[];
}

const SCOPE_PREFIX = 'https://www.googleapis.com/auth/';
const YOUTUBE_SCOPES = ['youtube', 'youtube.upload', 'youtube.force-ssl', 'youtube.readonly', 'youtubepartner'].map((s) => SCOPE_PREFIX + s);
const DEFAULT_SCOPE = ['youtube.upload', 'youtube.force-ssl', 'youtube.readonly'].map((s) => SCOPE_PREFIX + s).join(' ');
const UPLOAD_SCOPES = ['youtube.upload', 'youtube', 'youtubepartner', 'youtube.force-ssl'].map((s) => SCOPE_PREFIX + s);
const READ_SCOPES = ['youtube.readonly', 'youtube', 'youtubepartner', 'youtube.force-ssl'].map((s) => SCOPE_PREFIX + s);
const COMMENT_SCOPES = [SCOPE_PREFIX + 'youtube.force-ssl'];
const ACCESS_TTL_S = 3_599;
const CODE_TTL_MS = 10 * 60_000;
const TESTING_REFRESH_TTL_MS = 7 * 86_400_000;
const DAY_MS = 86_400_000;
const CHUNK = 262_144;
const MAX_FILE = 256 * 1024 ** 3;
const FAILURE_REASONS = ['codec', 'conversion', 'emptyFile', 'invalidFile', 'tooSmall', 'uploadAborted'];
const PRIVACY = ['private', 'public', 'unlisted'] as const;
const CATEGORIES = ['1', '2', '10', '15', '17', '19', '20', '22', '23', '24', '25', '26', '27', '28', '29'];
const MAX_COMMENT = 10_000;

const UNAUTHENTICATED = {
  error: {
    code: 401,
    message: 'Request had invalid authentication credentials.',
    errors: [{ message: 'Invalid Credentials', domain: 'global', reason: 'authError', location: 'Authorization', locationType: 'header' }],
    status: 'UNAUTHENTICATED',
  },
};
const INSUFFICIENT_SCOPE = {
  error: {
    code: 403,
    message: 'Request had insufficient authentication scopes.',
    errors: [{ message: 'Insufficient Permission', domain: 'global', reason: 'insufficientPermissions' }],
    status: 'PERMISSION_DENIED',
  },
};
const DEAD_GRANT = { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' };
const BAD_CLIENT = { error: 'invalid_client', error_description: 'Unauthorized' };

interface Code {
  channelId: string;
  redirectUri: string;
  challenge: string | null;
  method: string;
  scope: string[];
  offline: boolean;
}

interface SessionState {
  chunks: Buffer[];
  mime: string;
  createdAt: number;
  parts: string[];
  meta: Pick<YouTubeVideo, 'title' | 'description' | 'tags' | 'categoryId' | 'privacyStatus' | 'publishAt' | 'madeForKids'>;
}

export async function startYouTubeFake(options: YouTubeFakeOptions = {}): Promise<YouTubeFake> {
  const clientId = options.clientId ?? `${randomDigits(12)}-${base62(32).toLowerCase()}.apps.googleusercontent.com`;
  const clientSecret = options.clientSecret ?? `GOCSPX-${base64url(21)}`;
  const state = createFakeState<YouTubeFaultTarget>(options.now);
  const { now, recorder, tokens } = state;

  const channels = new Map<string, YouTubeChannel>();
  /** Channel id → the first channel of its account (the key tokens and consents use). */
  const primaryOf = new Map<string, string>();
  const videos: YouTubeVideo[] = [];
  const sessions = new Map<string, YouTubeSession>();
  const sessionState = new Map<string, SessionState>();
  const pollsLeft = new Map<string, number>();
  const plannedOutcome = new Map<string, string>();
  const revocations: YouTubeRevocation[] = [];
  const codes = new CodeStore<Code>(now, CODE_TTL_MS);
  const insertsByDay = new Map<string, number>();
  const sessionStarts: { channelId: string; at: number }[] = [];
  const plannedFailures: string[] = [];
  let refreshCount = 0;
  let putCalls = 0;
  let baseUrl = '';
  const settings = {
    testingConsent: options.testingConsent ?? false,
    videoPolls: options.videoPolls ?? 2,
    uploadQuota: options.uploadQuota ?? 100,
    channelUploadLimit: options.channelUploadLimit ?? 1_000,
    sessionTtlMs: options.sessionTtlMs ?? 7 * DAY_MS,
  };

  const app = await createFakeApp({
    bodyLimit: 512 * 1024 * 1024,
    jsonError: 'Parse Error',
    errorBody: (status, message) => googleError(status, status < 500 ? 'parseError' : 'backendError', message),
    notFoundBody: () => googleError(404, 'notFound', 'Not Found'),
  });

  const iso = (ms: number) => new Date(ms).toISOString();

  const defaultFaultBody = (target: YouTubeFaultTarget, status: number): unknown => {
    if (target === 'token' || target === 'revoke') {
      if (status === 400) return DEAD_GRANT;
      if (status === 401) return BAD_CLIENT;
      return { error: 'internal_failure', error_description: 'Backend Error' };
    }
    if (status === 401) return UNAUTHENTICATED;
    if (status === 403) return googleError(403, 'quotaExceeded', 'The request cannot be completed because you have exceeded your quota.', 'youtube.quota');
    if (status === 404) return googleError(404, 'notFound', 'Not Found');
    if (status === 429) return googleError(429, 'rateLimitExceeded', 'Rate Limit Exceeded');
    if (status >= 500) return googleError(status, 'backendError', 'Backend Error');
    return googleError(status, 'badRequest', 'Bad Request');
  };

  const route = (
    instance: FastifyInstance,
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    target: YouTubeFaultTarget,
    handler: (req: FastifyRequest, body: unknown) => Answer,
  ) =>
    fakeRoute(instance, state, {
      method,
      url: path,
      target,
      admit: () => {
        if (method === 'PUT') putCalls += 1;
      },
      faultAnswer: (fault) => plannedAnswer(fault, (status) => defaultFaultBody(target, status)),
      // A commitThenDrop planned on `upload` waits for the PUT that makes the video; an answer is taken at once.
      dropWhenMade: target === 'upload',
      handle: handler,
    });

  // --- Tokens ----------------------------------------------------------------------------------

  /** The caller's channel, or the answer to give instead. */
  const authenticate = (req: FastifyRequest, anyOf: string[]): YouTubeChannel | Answer => {
    const grant = tokens.bearer(req);
    const channel = grant === undefined ? undefined : channels.get(grant.subject);
    if (grant === undefined || channel === undefined) return { status: 401, body: UNAUTHENTICATED };
    if (!anyOf.some((s) => grant.scope.includes(s))) return { status: 403, body: INSUFFICIENT_SCOPE };
    return channel;
  };

  const newAccessToken = (channelId: string, scope: string[], grant?: number) =>
    tokens.issue('access', `ya29.${base64url(120)}`, { subject: channelId, scope, ttlMs: ACCESS_TTL_S * 1000, grant });

  const issueTokens = (channelId: string, scope: string[], offline: boolean) => {
    const access = newAccessToken(channelId, scope);
    const refreshToken = offline ? tokens.issue('refresh', `1//${base64url(75)}`, { subject: channelId, scope, grant: access.grant }).token : undefined;
    return { accessToken: access.token, refreshToken };
  };

  const tokenAnswer = (accessToken: string, refreshToken: string | undefined, scope: string[]): Answer => ({
    status: 200,
    body: {
      access_token: accessToken,
      expires_in: ACCESS_TTL_S,
      ...(refreshToken === undefined ? {} : { refresh_token: refreshToken }),
      scope: scope.join(' '),
      token_type: 'Bearer',
    },
  });

  /** Client credentials from the form or HTTP Basic; whether they match. */
  const clientAuthenticated = (req: FastifyRequest, form: Record<string, string | undefined>) => {
    const sent = basicCredentials(req);
    if (sent !== undefined) return sent !== null && formDecode(sent.id) === clientId && formDecode(sent.secret) === clientSecret;
    return form.client_id === clientId && form.client_secret === clientSecret;
  };

  const refreshDead = (token: IssuedToken) => token.dead || (settings.testingConsent && now() - token.issuedAt >= TESTING_REFRESH_TTL_MS);

  const consent = installConsentPage({
    app,
    path: '/o/oauth2/v2/auth',
    recorder,
    who: 'channelId',
    firstSubject: () => [...primaryOf.values()][0],
    check: (query) => {
      const method = query.code_challenge_method ?? 'plain';
      return query.response_type !== 'code'
        ? 'response_type must be code'
        : query.client_id !== clientId
          ? 'invalid_client: The OAuth client was not found.'
          : query.redirect_uri === undefined || !/^https?:\/\//.test(query.redirect_uri)
            ? 'redirect_uri_mismatch'
            : !scopeOf(query).some((s) => YOUTUBE_SCOPES.includes(s))
              ? 'invalid_scope: no YouTube scope requested'
              : query.code_challenge !== undefined && method !== 'S256' && method !== 'plain'
                ? 'code_challenge_method must be S256 or plain'
                : null;
    },
    errorPage: (reason) => `<p>Error 400: invalid_request</p><!-- ${reason} -->`,
    nobody: { reason: 'no account to consent as (addUser first)', page: '<p>No account is signed in to the fake (call addUser).</p>' },
    refused: (query) => ({ error: 'access_denied', ...stateOf(query) }),
    approved: (query, channelId) => {
      const code = `4/0${base64url(60)}`;
      const scope = scopeOf(query);
      codes.issue(code, {
        channelId,
        redirectUri: query.redirect_uri!,
        challenge: query.code_challenge ?? null,
        method: query.code_challenge_method ?? 'plain',
        scope,
        offline: query.access_type === 'offline',
      });
      return { ...stateOf(query), code, scope: scope.join(' ') };
    },
  });

  route(app, 'POST', '/token', 'token', (req, body) => {
    const form = stringFields(body);
    if (!clientAuthenticated(req, form)) return { status: 401, body: BAD_CLIENT };
    if (form.grant_type === 'authorization_code') {
      const code = codes.redeem(form.code);
      if (code === undefined) return { status: 400, body: DEAD_GRANT };
      if (form.redirect_uri !== code.redirectUri) return { status: 400, body: { error: 'redirect_uri_mismatch', error_description: 'Bad Request' } };
      if (code.challenge !== null) {
        const verifier = form.code_verifier;
        const expected = verifier === undefined ? undefined : code.method === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
        if (expected !== code.challenge) return { status: 400, body: DEAD_GRANT };
      }
      const issued = issueTokens(code.channelId, code.scope, code.offline);
      return tokenAnswer(issued.accessToken, issued.refreshToken, code.scope);
    }
    if (form.grant_type === 'refresh_token') {
      const old = tokens.live('refresh', form.refresh_token);
      if (old === undefined || refreshDead(old)) return { status: 400, body: DEAD_GRANT };
      refreshCount += 1;
      return tokenAnswer(newAccessToken(old.subject, old.scope, old.grant).token, undefined, old.scope);
    }
    return { status: 400, body: { error: 'unsupported_grant_type', error_description: `Invalid grant_type: ${form.grant_type ?? ''}` } };
  });

  route(app, 'POST', '/revoke', 'revoke', (req, body) => {
    const token = stringFields(req.query).token ?? stringFields(body).token;
    const found = token === undefined ? undefined : tokens.tokens.get(token);
    revocations.push({ token: token ?? '', kind: found?.kind ?? 'unknown' });
    if (found === undefined || found.dead || (found.kind === 'refresh' && refreshDead(found)))
      return { status: 400, body: { error: 'invalid_token', error_description: 'Token expired or revoked' } };
    tokens.kill((t) => t.grant === found.grant);
    return { status: 200, body: {} };
  });

  // --- Channels --------------------------------------------------------------------------------

  route(app, 'GET', '/youtube/v3/channels', 'channels', (req) => {
    const channel = authenticate(req, READ_SCOPES);
    if (isAnswer(channel)) return channel;
    const query = stringFields(req.query);
    const parts = splitParts(query.part);
    if (parts.length === 0) return { status: 400, body: googleError(400, 'required', 'Required parameter: part', 'global') };
    if (query.mine !== 'true')
      return { status: 400, body: googleError(400, 'missingRequiredParameter', 'The fake answers channels.list only with mine=true.') };
    const mine = [...channels.values()].filter((c) => primaryOf.get(c.id) === channel.id);
    const items = mine.map((c) => ({
      kind: 'youtube#channel',
      etag: etag(),
      id: c.id,
      ...(parts.includes('snippet')
        ? {
            snippet: {
              title: c.title,
              description: '',
              ...(c.customUrl === undefined ? {} : { customUrl: c.customUrl }),
              publishedAt: iso(0),
              thumbnails: {},
              localized: { title: c.title, description: '' },
            },
          }
        : {}),
      ...(parts.includes('contentDetails') ? { contentDetails: { relatedPlaylists: { likes: '', uploads: c.uploadsPlaylistId } } } : {}),
    }));
    return {
      status: 200,
      body: { kind: 'youtube#channelListResponse', etag: etag(), pageInfo: { totalResults: items.length, resultsPerPage: 5 }, items },
    };
  });

  // --- Upload sessions -------------------------------------------------------------------------

  const pacificDay = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Los_Angeles', year: 'numeric', month: '2-digit', day: '2-digit' });

  route(app, 'POST', '/upload/youtube/v3/videos', 'insert', (req, body) => {
    const channel = authenticate(req, UPLOAD_SCOPES);
    if (isAnswer(channel)) return channel;
    const day = pacificDay.format(new Date(now()));
    const used = insertsByDay.get(day) ?? 0;
    if (used >= settings.uploadQuota)
      return {
        status: 403,
        body: googleError(
          403,
          'quotaExceeded',
          'The request cannot be completed because you have exceeded your <a href="/youtube/v3/getting-started#quota">quota</a>.',
          'youtube.quota',
        ),
      };
    insertsByDay.set(day, used + 1);

    const bad = (reason: string, message: string, domain = 'youtube.video'): Answer => ({ status: 400, body: googleError(400, reason, message, domain) });
    const query = stringFields(req.query);
    if (query.uploadType !== 'resumable') return bad('badRequest', 'The fake supports only uploadType=resumable.', 'global');
    const parts = splitParts(query.part);
    if (parts.length === 0) return bad('required', 'Required parameter: part', 'global');
    const lengthHeader = header(req, 'x-upload-content-length');
    const total = lengthHeader !== undefined && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : Number.NaN;
    if (!Number.isSafeInteger(total) || total <= 0) return bad('badRequest', 'X-Upload-Content-Length must be a positive number of bytes.', 'global');
    if (total > MAX_FILE) return bad('badContent', `Media larger than ${MAX_FILE} bytes is not supported.`, 'global');
    const mime = (header(req, 'x-upload-content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (!/^video\/[a-z0-9.+-]+$/.test(mime) && mime !== 'application/octet-stream')
      return bad('badContent', `Media type '${mime}' is not supported. Valid media types: [video/*, application/octet-stream]`, 'global');
    if (!/^application\/json\b/i.test(header(req, 'content-type') ?? '') || !isObject(body))
      return bad('invalidVideoMetadata', 'The request metadata is invalid: a video resource as JSON is expected.');

    const snippet = isObject(body.snippet) ? body.snippet : {};
    const status = isObject(body.status) ? body.status : {};
    const title = snippet.title;
    if (typeof title !== 'string' || title.trim() === '' || [...title].length > 100 || /[<>]/.test(title))
      return bad('invalidTitle', 'The request metadata specifies an invalid or empty video title.');
    const description = snippet.description ?? '';
    if (typeof description !== 'string' || Buffer.byteLength(description, 'utf8') > 5_000 || /[<>]/.test(description))
      return bad('invalidDescription', 'The request metadata specifies an invalid video description.');
    const tags = snippet.tags ?? [];
    if (!Array.isArray(tags) || !tags.every((t) => typeof t === 'string') || tagsLength(tags) > 500)
      return bad('invalidTags', 'The request metadata specifies invalid video keywords.');
    const categoryId = snippet.categoryId ?? '22';
    if (typeof categoryId !== 'string' || !CATEGORIES.includes(categoryId))
      return bad('invalidCategoryId', 'The snippet.categoryId property specifies an invalid category ID.');
    const privacy = status.privacyStatus ?? 'public';
    if (typeof privacy !== 'string' || !(PRIVACY as readonly string[]).includes(privacy))
      return bad('invalidVideoMetadata', 'The request metadata is invalid: status.privacyStatus must be private, public or unlisted.');
    const publishAt = status.publishAt;
    if (publishAt !== undefined) {
      const ms =
        typeof publishAt === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(publishAt)
          ? Date.parse(publishAt)
          : Number.NaN;
      if (privacy !== 'private' || Number.isNaN(ms) || ms <= now())
        return bad('invalidPublishAt', 'The request metadata specifies an invalid scheduled publishing time.');
    }
    const madeForKids = status.selfDeclaredMadeForKids ?? false;
    if (typeof madeForKids !== 'boolean')
      return bad('invalidVideoMetadata', 'The request metadata is invalid: status.selfDeclaredMadeForKids must be a boolean.');

    const t = now();
    const recent = sessionStarts.filter((s) => s.channelId === channel.id && t - s.at < DAY_MS).length;
    if (recent >= settings.channelUploadLimit) return bad('uploadLimitExceeded', 'The user has exceeded the number of videos they may upload.');
    sessionStarts.push({ channelId: channel.id, at: t });

    const id = base64url(48);
    sessions.set(id, { channelId: channel.id, total, received: 0, videoId: null, expired: false });
    sessionState.set(id, {
      chunks: [],
      mime,
      createdAt: t,
      parts,
      meta: {
        title,
        description,
        tags: tags,
        categoryId,
        privacyStatus: privacy as YouTubeVideo['privacyStatus'],
        publishAt: typeof publishAt === 'string' ? publishAt : null,
        madeForKids,
      },
    });
    return {
      status: 200,
      headers: {
        location: `${baseUrl}/upload/youtube/v3/videos?uploadType=resumable&upload_id=${id}`,
        'x-guploader-uploadid': id,
      },
    };
  });

  const videoResource = (v: YouTubeVideo, parts: string[]) => ({
    kind: 'youtube#video',
    etag: etag(),
    id: v.id,
    ...(parts.includes('snippet')
      ? {
          snippet: {
            publishedAt: v.publishedAt,
            channelId: v.channelId,
            title: v.title,
            description: v.description,
            thumbnails: {},
            channelTitle: channels.get(v.channelId)?.title ?? '',
            ...(v.tags.length > 0 ? { tags: v.tags } : {}),
            categoryId: v.categoryId,
            liveBroadcastContent: 'none',
            localized: { title: v.title, description: v.description },
          },
        }
      : {}),
    ...(parts.includes('status')
      ? {
          status: {
            uploadStatus: v.uploadStatus,
            ...(v.failureReason === null ? {} : { failureReason: v.failureReason }),
            ...(v.rejectionReason === null ? {} : { rejectionReason: v.rejectionReason }),
            privacyStatus: v.privacyStatus,
            ...(v.publishAt === null ? {} : { publishAt: v.publishAt }),
            license: 'youtube',
            embeddable: true,
            publicStatsViewable: true,
            madeForKids: v.madeForKids,
            selfDeclaredMadeForKids: v.madeForKids,
          },
        }
      : {}),
    ...(parts.includes('processingDetails') ? { processingDetails: { processingStatus: v.processingStatus } } : {}),
  });

  const makeVideo = (session: YouTubeSession, state: SessionState): YouTubeVideo => {
    const video: YouTubeVideo = {
      id: base64url(8).slice(0, 11),
      channelId: session.channelId,
      ...state.meta,
      bytes: Buffer.concat(state.chunks),
      mime: state.mime,
      uploadStatus: 'uploaded',
      processingStatus: 'processing',
      failureReason: null,
      rejectionReason: null,
      comments: [],
      publishedAt: iso(now()),
    };
    state.chunks = [];
    videos.push(video);
    session.videoId = video.id;
    pollsLeft.set(video.id, settings.videoPolls);
    const planned = plannedFailures.shift();
    if (planned !== undefined) plannedOutcome.set(video.id, planned);
    return video;
  };

  await app.register((child, _options, registered) => {
    child.removeAllContentTypeParsers();
    child.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, raw, done) => done(null, raw));
    route(child, 'PUT', '/upload/youtube/v3/videos', 'upload', (req, body) => {
      const id = stringFields(req.query).upload_id ?? '';
      const session = sessions.get(id);
      const state = sessionState.get(id);
      const gone: Answer = { status: 404, body: googleError(404, 'notFound', 'Not Found') };
      if (session === undefined || state === undefined) return gone;
      if (!session.expired && now() - state.createdAt >= settings.sessionTtlMs) session.expired = true;
      if (session.expired) return gone;
      const headers = { 'x-guploader-uploadid': id };
      const done = (): Answer => {
        const video = videos.find((v) => v.id === session.videoId)!;
        return { status: 201, headers, body: videoResource(video, state.parts) };
      };
      if (session.videoId !== null) return done();
      const incomplete = (): Answer => ({
        status: 308,
        headers: session.received > 0 ? { ...headers, range: `bytes=0-${session.received - 1}` } : headers,
      });
      const bad = (message: string): Answer => ({ status: 400, headers, body: googleError(400, 'badRequest', message, 'global') });
      const bytes = Buffer.isBuffer(body) ? body : Buffer.alloc(0);
      const range = header(req, 'content-range');
      let start: number;
      let end: number;
      if (range === undefined) {
        if (bytes.length === 0) return incomplete();
        start = 0;
        end = bytes.length - 1;
      } else {
        const probe = /^bytes \*\/(\d+|\*)$/.exec(range.trim());
        if (probe !== null) {
          if (bytes.length > 0) return bad('A status query (bytes */N) must have no body.');
          if (probe[1] !== '*' && Number(probe[1]) !== session.total) return bad(`Content-Range total ${probe[1]} is not the session's ${session.total}.`);
          return incomplete();
        }
        const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(range.trim());
        if (m === null) return bad(`Failed to parse Content-Range header: ${range}`);
        start = Number(m[1]);
        end = Number(m[2]);
        if (m[3] !== '*' && Number(m[3]) !== session.total) return bad(`Content-Range total ${m[3]} is not the session's ${session.total}.`);
        if (end < start || end - start + 1 !== bytes.length) return bad(`Content-Range ${range} does not match the ${bytes.length} bytes sent.`);
      }
      if (start !== session.received) return bad(`Bytes must continue at offset ${session.received}; the chunk starts at ${start}.`);
      if (end + 1 > session.total) return bad(`The chunk ends past the announced ${session.total} bytes.`);
      const last = end + 1 === session.total;
      if (!last && bytes.length % CHUNK !== 0)
        return bad(`Invalid chunk size ${bytes.length}: chunks other than the last must be a multiple of ${CHUNK} bytes.`);
      state.chunks.push(bytes);
      session.received += bytes.length;
      if (!last) return incomplete();
      makeVideo(session, state);
      return { ...done(), made: true };
    });
    registered();
  });

  // --- Videos, uploads playlist, comments ------------------------------------------------------

  /** One poll's worth of processing. */
  const poll = (v: YouTubeVideo) => {
    if (v.uploadStatus !== 'uploaded') return;
    const left = pollsLeft.get(v.id) ?? 0;
    if (left > 0) {
      pollsLeft.set(v.id, left - 1);
      return;
    }
    const planned = plannedOutcome.get(v.id);
    if (planned === undefined) {
      v.uploadStatus = 'processed';
      v.processingStatus = 'succeeded';
    } else if (FAILURE_REASONS.includes(planned)) {
      v.uploadStatus = 'failed';
      v.failureReason = planned;
      v.processingStatus = 'failed';
    } else {
      v.uploadStatus = 'rejected';
      v.rejectionReason = planned;
      v.processingStatus = 'succeeded';
    }
  };

  route(app, 'GET', '/youtube/v3/videos', 'videos', (req) => {
    const channel = authenticate(req, READ_SCOPES);
    if (isAnswer(channel)) return channel;
    const query = stringFields(req.query);
    const parts = splitParts(query.part);
    if (parts.length === 0) return { status: 400, body: googleError(400, 'required', 'Required parameter: part', 'global') };
    const ids = (query.id ?? '').split(',').filter((s) => s !== '');
    if (ids.length === 0)
      return {
        status: 400,
        body: googleError(400, 'missingRequiredParameter', 'No filter selected. Expected one of: id, myRating, chart', 'youtube.parameter'),
      };
    const items = [];
    for (const id of ids) {
      const v = videos.find((x) => x.id === id);
      if (v === undefined || (v.channelId !== channel.id && v.privacyStatus !== 'public')) continue;
      poll(v);
      items.push(videoResource(v, parts));
    }
    return {
      status: 200,
      body: { kind: 'youtube#videoListResponse', etag: etag(), items, pageInfo: { totalResults: items.length, resultsPerPage: items.length } },
    };
  });

  route(app, 'GET', '/youtube/v3/playlistItems', 'playlist', (req) => {
    const channel = authenticate(req, READ_SCOPES);
    if (isAnswer(channel)) return channel;
    const query = stringFields(req.query);
    const parts = splitParts(query.part);
    if (parts.length === 0) return { status: 400, body: googleError(400, 'required', 'Required parameter: part', 'global') };
    const owner = [...channels.values()].find((c) => c.uploadsPlaylistId === query.playlistId);
    if (owner === undefined)
      return {
        status: 404,
        body: googleError(
          404,
          'playlistNotFound',
          "The playlist identified with the request's <code>playlistId</code> parameter cannot be found.",
          'youtube.playlistItem',
        ),
      };
    const max = query.maxResults === undefined ? 5 : Number(query.maxResults);
    if (!Number.isInteger(max) || max < 0 || max > 50)
      return {
        status: 400,
        body: googleError(400, 'invalidParameter', `Invalid value '${query.maxResults}'. Values must be within the range: [0, 50]`, 'youtube.parameter'),
      };
    const list = videos.filter((v) => v.channelId === owner.id && (owner.id === channel.id || v.privacyStatus === 'public')).reverse();
    const items = list.slice(0, max).map((v, position) => ({
      kind: 'youtube#playlistItem',
      etag: etag(),
      id: Buffer.from(`${owner.uploadsPlaylistId}.${v.id}`).toString('base64url'),
      ...(parts.includes('snippet')
        ? {
            snippet: {
              publishedAt: v.publishedAt,
              channelId: owner.id,
              title: v.title,
              description: v.description,
              thumbnails: {},
              channelTitle: owner.title,
              playlistId: owner.uploadsPlaylistId,
              position,
              resourceId: { kind: 'youtube#video', videoId: v.id },
              videoOwnerChannelTitle: owner.title,
              videoOwnerChannelId: owner.id,
            },
          }
        : {}),
      ...(parts.includes('contentDetails')
        ? { contentDetails: { videoId: v.id, ...(v.privacyStatus === 'private' ? {} : { videoPublishedAt: v.publishedAt }) } }
        : {}),
      ...(parts.includes('status') ? { status: { privacyStatus: v.privacyStatus } } : {}),
    }));
    return {
      status: 200,
      body: { kind: 'youtube#playlistItemListResponse', etag: etag(), items, pageInfo: { totalResults: list.length, resultsPerPage: max } },
    };
  });

  route(app, 'POST', '/youtube/v3/commentThreads', 'comment', (req, body) => {
    const channel = authenticate(req, COMMENT_SCOPES);
    if (isAnswer(channel)) return channel;
    const domain = 'youtube.commentThread';
    const snippet = isObject(body) && isObject(body.snippet) ? body.snippet : undefined;
    const top = snippet !== undefined && isObject(snippet.topLevelComment) ? snippet.topLevelComment : undefined;
    const text = top !== undefined && isObject(top.snippet) ? top.snippet.textOriginal : undefined;
    const videoId = snippet?.videoId;
    if (typeof videoId !== 'string' || videoId === '')
      return { status: 400, body: googleError(400, 'channelOrVideoIdMissing', 'The comment thread must be linked to a video.', domain) };
    if (typeof text !== 'string' || text.trim() === '')
      return { status: 400, body: googleError(400, 'commentTextRequired', 'The comment must contain text.', domain) };
    if ([...text].length > MAX_COMMENT) return { status: 400, body: googleError(400, 'commentTextTooLong', 'The comment text is too long.', domain) };
    const v = videos.find((x) => x.id === videoId);
    if (v === undefined || v.uploadStatus === 'failed' || v.uploadStatus === 'rejected' || (v.channelId !== channel.id && v.privacyStatus === 'private'))
      return {
        status: 404,
        body: googleError(
          404,
          'videoNotFound',
          'The video identified by the <code><a href="/youtube/v3/docs/commentThreads/insert#videoId">videoId</a></code> parameter could not be found.',
          domain,
        ),
      };
    if (v.madeForKids)
      return {
        status: 403,
        body: googleError(403, 'commentsDisabled', 'The video identified by the <code>videoId</code> parameter has disabled comments.', domain),
      };
    const id = `Ugz${base64url(15)}4AaABAg`;
    v.comments.push({ id, text });
    const t = iso(now());
    const commentSnippet = {
      channelId: v.channelId,
      videoId: v.id,
      textDisplay: escapeHtml(text).replaceAll('\n', '<br>'),
      textOriginal: text,
      authorDisplayName: channel.title,
      authorChannelId: { value: channel.id },
      canRate: true,
      viewerRating: 'none',
      likeCount: 0,
      publishedAt: t,
      updatedAt: t,
    };
    return {
      status: 200,
      body: {
        kind: 'youtube#commentThread',
        etag: etag(),
        id,
        snippet: {
          channelId: v.channelId,
          videoId: v.id,
          topLevelComment: { kind: 'youtube#comment', etag: etag(), id, snippet: commentSnippet },
          canReply: true,
          totalReplyCount: 0,
          isPublic: true,
        },
      },
    };
  });

  const newChannel = (title: string, customUrl: string | undefined): YouTubeChannel => {
    const key = base64url(17).slice(0, 22);
    const channel: YouTubeChannel = { id: `UC${key}`, title, ...(customUrl === undefined ? {} : { customUrl }), uploadsPlaylistId: `UU${key}` };
    channels.set(channel.id, channel);
    return channel;
  };

  baseUrl = await listenLocal(app);

  const fake: Omit<YouTubeFake, 'testingConsent' | 'videoPolls' | 'uploadQuota' | 'channelUploadLimit'> = {
    ...fakeControls(app, state, consent),
    url: baseUrl,
    clientId,
    clientSecret,
    addUser({ name, customUrl }) {
      const channel = newChannel(name, customUrl);
      primaryOf.set(channel.id, channel.id);
      return { id: randomDigits(21), name, channel: { ...channel } };
    },
    addChannel(user, { title, customUrl }) {
      if (!channels.has(user.channel.id)) throw new Error(`no user ${user.id}`);
      const channel = newChannel(title, customUrl);
      primaryOf.set(channel.id, user.channel.id);
      return { ...channel };
    },
    consentAs(user) {
      if (!channels.has(user.channel.id)) throw new Error(`no user ${user.id}`);
      consent.consentAs(user.channel.id);
    },
    grant(user, scope = DEFAULT_SCOPE) {
      if (!channels.has(user.channel.id)) throw new Error(`no user ${user.id}`);
      const issued = issueTokens(user.channel.id, scope.split(' '), true);
      return { accessToken: issued.accessToken, refreshToken: issued.refreshToken! };
    },
    revokeApp(user) {
      tokens.kill((t) => t.subject === user.channel.id);
    },
    refreshes: () => refreshCount,
    expireSession(id) {
      const session = sessions.get(id);
      if (session === undefined) throw new Error(`no session ${id}`);
      session.expired = true;
    },
    finishProcessing() {
      for (const id of pollsLeft.keys()) pollsLeft.set(id, 0);
    },
    failNextVideo(reason = 'codec') {
      plannedFailures.push(reason);
    },
    videos,
    sessions,
    get putCalls() {
      return putCalls;
    },
    authorizations: consent.authorizations,
    revocations,
  };
  return withSettings(fake, settings, ['testingConsent', 'videoPolls', 'uploadQuota', 'channelUploadLimit']);
}

/** Google's JSON error body. */
function googleError(code: number, reason: string, message: string, domain = 'global') {
  return { error: { code, message, errors: [{ message, domain, reason }] } };
}

/** Characters counted against the 500 limit: commas between tags, and quotes around a tag with a space. */
function tagsLength(tags: string[]): number {
  if (tags.length === 0) return 0;
  return tags.reduce((sum, t) => sum + [...t].length + (/\s/.test(t) ? 2 : 0), 0) + tags.length - 1;
}

function splitParts(part: string | undefined): string[] {
  return (part ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

/** The consent's scopes, space-separated (or `+` as some clients send it). */
function scopeOf(query: Record<string, string>): string[] {
  return (query.scope ?? '').split(/[ +]/).filter((s) => s !== '');
}

function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#39;');
}

function base64url(bytes: number): string {
  return randomBytes(bytes).toString('base64url');
}

function etag(): string {
  return base64url(20);
}
