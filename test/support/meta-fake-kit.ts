import { randomBytes } from 'node:crypto';
import multipart from '@fastify/multipart';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { acceptEmptyJson, FaultQueue, recordedHeaders, type Fault } from './fake-kit.js';

/**
 * What the Meta fakes (Instagram, Threads, Facebook Pages) share: Meta's error body and the errors all three give,
 * the usage headers, tokens on a clock, reading the token and the parameters from wherever Meta takes them, the
 * request recorder, planned faults, the media fetcher (Meta's crawler) and the Fastify scaffold.
 *
 * Exports:
 * - `MetaAnswer` `{status, body?, headers?}`: what a handler gives back; `isMetaAnswer(value)`.
 * - `metaError(fields, status?)`: an answer with Meta's body `{error:{message,type,code,error_subcode?,error_user_title?,
 *   error_user_msg?,fbtrace_id,is_transient}}` (type `OAuthException` and status 400 unless told); `fbtraceId()`.
 * - `metaErrors`: the named errors: `expiredToken(expiredAtMs, nowMs)` 190/463, `invalidToken()` 190,
 *   `noToken()` 2500, `revokedToken()` 190/460, `permission(detail?)` 10, `permissionsError(detail?)` 200,
 *   `appThrottled()` 4, `instagramThrottled()` 80002, `pageThrottled()` 80001, `unknownError()` 1 (transient),
 *   `serviceError()` 2 (transient), `unsupportedGet(id)` / `unsupportedPost(id)` 100/33, `nonexistingField(field)` 100,
 *   `unknownPath(path)` 2500, `missingParameter(name)` 100, `invalidParameter(message, subcode?)` 100.
 * - `appUsageHeader(usage)` → `{'x-app-usage': …}`; `businessUseCaseHeader(objectId, type, usage)` →
 *   `{'x-business-use-case-usage': …}`; `UsageMeter` / `createUsageMeter({now, type, callsPerHour?})`: calls per object
 *   in a rolling hour, `throttle(objectId, minutes)`, the header for an object.
 * - `MetaTokenStore` (class, `new MetaTokenStore(now, prefix)`): `issue(userId, {kind, ttlMs, scopes})`, `get(token)`,
 *   `check(token)` (the token, or the 190/2500 answer), `killUser(userId)`, `expireAll()`, `tokens`.
 * - `readAccessToken(req, params)`: `Authorization: Bearer|OAuth <token>`, else the `access_token` parameter.
 * - `readParams(req, body)`: query string, then form, JSON or multipart fields (later ones win), as strings;
 *   `parseIdList(value)` (comma list or JSON array); `readBody(req)` (parsed body, `MetaMultipart` for multipart
 *   (`fields`, `files[name] = {bytes, mime, filename}`), a Buffer for other content types).
 * - `MetaRecordedRequest`, `createRecorder()` → `{requests, record(req, body)}`; `redactQuery(pathWithQuery)`; `REDACTED`.
 * - `MetaFault` (`{kind:'answer', status, body?, headers?}` | `{kind:'commitThenDrop'}`), `FaultQueue<T>`
 *   (`push(target, fault)`, `take(target)`), `faultAnswer(fault)` (the answer with Meta's default body).
 * - `fetchMediaLikeMeta(url, {accept, maxBytes, timeoutMs?})` → `MediaFetchResult` (bytes, or a `MediaFetchFailure`
 *   reason: bad_url, unreachable, timeout, redirect, status, type, size); `CRAWLER_USER_AGENT`;
 *   `MetaFetchRecord` and `toFetchRecord(result)` for a fake's `fetches` ledger.
 * - `createMetaApp({bodyLimit?})`: Fastify, logger off, JSON + form + multipart, 404 = Meta's unknown path;
 *   `metaRoute(app, {method, url, target, recorder, faults, handle(ctx: MetaRouteContext), headers?})`: record →
 *   version check → planned fault → handler →
 *   headers → answer (or, for `commitThenDrop`, the handler's work then a destroyed socket); `listenLocal(app)` → url.
 * - `GRAPH_VERSION` (the `v<digits>.<digits>` pattern); `versioned(path)` = `/:version` + path and `isGraphVersion(v)`.
 * - `installMetaLogin(config)` → `MetaLogin` (`authorizations`, `consentAs`, `refuseNextConsent`, `refreshes`, `grant`):
 *   the consent page and token endpoints Instagram (Business Login) and Threads share (not Facebook Login's);
 *   `MetaUser`, `MetaAuthorization`.
 * - `parseFields(fields)`, `pickFields(node, known, asked, errorType?)` (the node's answer, or `nonexistingField`);
 *   `countSince(times, since)` for rolling 24-hour quotas.
 * - `numericIds(first)` → a generator of numeric string ids; `randomToken(prefix, bytes?)`; `metaTimestamp(ms)`
 *   (`2026-11-27T13:00:00+0000`); `pacificTime(ms)` (as in the expired-token message); `MB`, `MIB`, `DAY_MS`,
 *   `HOUR_MS`, `LONG_LIVED_TTL_S` (5183944), `isObject`.
 *
 * Sources: developers.facebook.com/docs/graph-api/guides/error-handling (the body, codes 1, 2, 4, 10, 17, 100, 190 and
 * subcodes 458–467, 200–299, 368, 506); developers.facebook.com/docs/graph-api/overview/rate-limiting (X-App-Usage,
 * X-Business-Use-Case-Usage, 80001/80002, `estimated_time_to_regain_access` in minutes);
 * developers.facebook.com/docs/sharing/webmasters/crawler (user agent `facebookexternalhit/1.1`, Range honoured or
 * ignored, an answer "within a few seconds"); developers.facebook.com/documentation/instagram-platform/content-publishing
 * ("We cURL media used in publishing attempts"); developers.facebook.com/docs/facebook-login/guides/access-tokens/
 * get-long-lived (`expires_in` 5183944); the login pages developers.facebook.com/documentation/instagram-platform/
 * instagram-api-with-instagram-login/business-login (Updated Mar 13, 2026) and developers.facebook.com/docs/threads/
 * get-started/get-access-tokens-and-permissions (the `#_` after the code, the refusal's parameters, codes valid 1 hour
 * and used once, the rejected exchange `{error_type, code: 400, error_message}`), …/reference/refresh_access_token and
 * developers.facebook.com/docs/threads/get-started/long-lived-tokens (refresh only a live token ≥ 24 h old). Messages seen in the wild (not on those pages, so the fakes' word): "Session has
 * expired on <Pacific time>. The current time is …", "Invalid OAuth access token - Cannot parse access token",
 * "Unsupported get request. Object with ID '…' does not exist…" (gitroomhq/postiz-app#1562), "Tried accessing
 * nonexisting field (status)" (exileum/meta-mcp#143), "Unknown path components".
 * Choices of the kit: HTTP 400 for every error but 10/200 (403) and the transient 1/2 (500); redirects are a failed
 * fetch (the crawler's handling of 3xx is undocumented); the fetch times out after 5 s; `client_secret`, `access_token`,
 * `fb_exchange_token` and `input_token` are recorded as `<redacted>`.
 */

export const MB = 1000 * 1000;
export const MIB = 1024 * 1024;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
/** What Meta's long-lived exchanges answer as `expires_in` ("about 60 days"). */
export const LONG_LIVED_TTL_S = 5_183_944;

// --- Answers and errors ----------------------------------------------------------------------------

export interface MetaAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export function isMetaAnswer(value: unknown): value is MetaAnswer {
  return isObject(value) && typeof value.status === 'number' && Object.keys(value).every((k) => k === 'status' || k === 'body' || k === 'headers');
}

export interface MetaErrorFields {
  message: string;
  /** `OAuthException` unless told (`GraphMethodException`, `THApiException`, `IGApiException`, ...). */
  type?: string;
  code: number;
  error_subcode?: number;
  error_user_title?: string;
  error_user_msg?: string;
  /** False unless told. */
  is_transient?: boolean;
  fbtrace_id?: string;
}

export function fbtraceId(): string {
  return randomBytes(8).toString('base64url').replace(/[-_]/g, 'A');
}

/** Meta's error body, fields in Meta's order. */
export function metaError(fields: MetaErrorFields, status = 400, headers?: Record<string, string>): MetaAnswer {
  const error = {
    message: fields.message,
    type: fields.type ?? 'OAuthException',
    code: fields.code,
    ...(fields.error_subcode === undefined ? {} : { error_subcode: fields.error_subcode }),
    ...(fields.error_user_title === undefined ? {} : { error_user_title: fields.error_user_title }),
    ...(fields.error_user_msg === undefined ? {} : { error_user_msg: fields.error_user_msg }),
    is_transient: fields.is_transient ?? false,
    fbtrace_id: fields.fbtrace_id ?? fbtraceId(),
  };
  return { status, body: { error }, ...(headers === undefined ? {} : { headers }) };
}

const RATE_LIMIT_DOC = 'For more info, please refer to https://developers.facebook.com/docs/graph-api/overview/rate-limiting.';

export const metaErrors = {
  /** 190/463: a token past its expiry, by the fake's clock. */
  expiredToken: (expiredAtMs: number, nowMs: number) =>
    metaError({
      message: `Error validating access token: Session has expired on ${pacificTime(expiredAtMs)}. The current time is ${pacificTime(nowMs)}.`,
      code: 190,
      error_subcode: 463,
    }),
  /** 190 without subcode: a token Meta never issued (or garbled). */
  invalidToken: () => metaError({ message: 'Invalid OAuth access token - Cannot parse access token', code: 190 }),
  /** No token at all. */
  noToken: () => metaError({ message: 'An active access token must be used to query information about the current user.', code: 2500 }),
  /** 190/460: the session was invalidated (the user removed the app, changed their password). */
  revokedToken: () =>
    metaError({
      message:
        'Error validating access token: The session has been invalidated because the user changed their password or Facebook has changed the session for security reasons.',
      code: 190,
      error_subcode: 460,
    }),
  /** (#10): the app or token lacks a permission. */
  permission: (detail = 'Application does not have permission for this action') => metaError({ message: `(#10) ${detail}`, code: 10 }, 403),
  /** (#200): permissions error. */
  permissionsError: (detail = 'Permissions error') => metaError({ message: `(#200) ${detail}`, code: 200 }, 403),
  /** (#4): app-level throttling (Platform Rate Limits). */
  appThrottled: (headers?: Record<string, string>) =>
    metaError({ message: '(#4) Application request limit reached', code: 4, is_transient: true }, 400, headers),
  /** (#80002): Instagram BUC throttling (400 per trypostit/trypost#281). */
  instagramThrottled: (headers?: Record<string, string>) =>
    metaError(
      {
        message: `(#80002) There have been too many calls to this Instagram account. Wait a bit and try again. ${RATE_LIMIT_DOC}`,
        code: 80002,
        is_transient: true,
      },
      400,
      headers,
    ),
  /** (#80001): Pages BUC throttling. */
  pageThrottled: (headers?: Record<string, string>) =>
    metaError(
      { message: `(#80001) There have been too many calls to this Page account. Wait a bit and try again. ${RATE_LIMIT_DOC}`, code: 80001, is_transient: true },
      400,
      headers,
    ),
  /** Code 1, transient. */
  unknownError: () => metaError({ message: 'An unknown error occurred', code: 1, is_transient: true }, 500),
  /** Code 2, transient. */
  serviceError: () => metaError({ message: 'An unexpected error has occurred. Please retry your request later.', code: 2, is_transient: true }, 500),
  /** 100/33 on a GET of an id that is not there (or not the caller's). */
  unsupportedGet: (id: string) =>
    metaError({
      message: `Unsupported get request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`,
      type: 'GraphMethodException',
      code: 100,
      error_subcode: 33,
    }),
  /** 100/33 on a POST to an id that is not there (or not the caller's). */
  unsupportedPost: (id: string) =>
    metaError({
      message: `Unsupported post request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`,
      type: 'GraphMethodException',
      code: 100,
      error_subcode: 33,
    }),
  /** 100: a field the node does not have (a media id asked for a container's `status`). */
  nonexistingField: (field: string, type = 'OAuthException') => metaError({ message: `(#100) Tried accessing nonexisting field (${field})`, type, code: 100 }),
  /** 2500: a path Graph does not know. */
  unknownPath: (path: string) => metaError({ message: `Unknown path components: ${path}`, code: 2500 }),
  missingParameter: (name: string, type = 'OAuthException') => metaError({ message: `(#100) The parameter ${name} is required`, type, code: 100 }),
  invalidParameter: (message: string, subcode?: number, type = 'OAuthException') =>
    metaError({
      message: message.startsWith('(#') ? message : `(#100) ${message}`,
      type,
      code: 100,
      ...(subcode === undefined ? {} : { error_subcode: subcode }),
    }),
};

// --- Usage headers ---------------------------------------------------------------------------------

export interface Usage {
  /** Percentages (0–100). */
  callCount: number;
  totalCputime?: number;
  totalTime?: number;
}

export function appUsageHeader(usage: Usage): Record<string, string> {
  return {
    'x-app-usage': JSON.stringify({ call_count: usage.callCount, total_cputime: usage.totalCputime ?? 0, total_time: usage.totalTime ?? 0 }),
  };
}

export function businessUseCaseHeader(objectId: string, type: string, usage: Usage & { estimatedTimeToRegainAccess?: number }): Record<string, string> {
  return {
    'x-business-use-case-usage': JSON.stringify({
      [objectId]: [
        {
          type,
          call_count: usage.callCount,
          total_cputime: usage.totalCputime ?? 0,
          total_time: usage.totalTime ?? 0,
          estimated_time_to_regain_access: usage.estimatedTimeToRegainAccess ?? 0,
        },
      ],
    }),
  };
}

export interface UsageMeter {
  /** Counts a call against the object (rolling hour). */
  count(objectId: string): void;
  /** The object answers throttled for this many minutes from now (by the clock). */
  throttle(objectId: string, minutes: number): void;
  /** Minutes left of a throttle (rounded up), 0 when not throttled. */
  throttledFor(objectId: string): number;
  /** `X-Business-Use-Case-Usage` for the object: call_count in percent of `callsPerHour`, 100 while throttled. */
  header(objectId: string): Record<string, string>;
  /** `X-App-Usage` for the whole app. */
  appHeader(): Record<string, string>;
}

/** The fakes' own model of BUC usage: the docs give a formula (4800 × impressions per 24 h), not a figure. */
export function createUsageMeter(options: { now: () => number; type: string; callsPerHour?: number }): UsageMeter {
  const perHour = options.callsPerHour ?? 200;
  const calls = new Map<string, number[]>();
  const throttledUntil = new Map<string, number>();
  const recent = (objectId: string) => {
    const since = options.now() - HOUR_MS;
    const list = (calls.get(objectId) ?? []).filter((t) => t > since);
    calls.set(objectId, list);
    return list;
  };
  const percent = (n: number) => Math.min(100, Math.round((100 * n) / perHour));
  const throttledFor = (objectId: string) => Math.max(0, Math.ceil(((throttledUntil.get(objectId) ?? 0) - options.now()) / 60_000));
  return {
    count(objectId) {
      recent(objectId).push(options.now());
    },
    throttle(objectId, minutes) {
      throttledUntil.set(objectId, options.now() + minutes * 60_000);
    },
    throttledFor,
    header(objectId) {
      const left = throttledFor(objectId);
      const callCount = left > 0 ? 100 : percent(recent(objectId).length);
      return businessUseCaseHeader(objectId, options.type, {
        callCount,
        totalCputime: Math.ceil(callCount / 4),
        totalTime: Math.ceil(callCount / 3),
        estimatedTimeToRegainAccess: left,
      });
    },
    appHeader() {
      const all = [...calls.keys()].reduce((sum, id) => sum + recent(id).length, 0);
      return appUsageHeader({ callCount: percent(all / 10), totalCputime: 0, totalTime: 0 });
    },
  };
}

// --- Tokens ----------------------------------------------------------------------------------------

export interface MetaToken {
  token: string;
  userId: string;
  /** 'short' (1 h), 'long' (60 days), 'page', ...: the fake's label. */
  kind: string;
  scopes: string[];
  issuedAt: number;
  /** In ms by the clock; Infinity for tokens that do not expire (Page tokens). */
  expiresAt: number;
  dead: boolean;
}

export function randomToken(prefix: string, bytes = 96): string {
  return prefix + randomBytes(bytes).toString('base64url').replace(/[-_]/g, 'Z');
}

export class MetaTokenStore {
  readonly tokens = new Map<string, MetaToken>();
  private readonly now: () => number;
  private readonly prefix: string;

  /** `prefix` starts every token: `IGAA` (Instagram), `THAA` (Threads), `EAA` (Facebook). */
  constructor(now: () => number, prefix: string) {
    this.now = now;
    this.prefix = prefix;
  }

  issue(userId: string, options: { kind: string; ttlMs: number; scopes: string[] }): MetaToken {
    const token: MetaToken = {
      token: randomToken(this.prefix),
      userId,
      kind: options.kind,
      scopes: [...options.scopes],
      issuedAt: this.now(),
      expiresAt: this.now() + options.ttlMs,
      dead: false,
    };
    this.tokens.set(token.token, token);
    return token;
  }

  get(token: string | undefined): MetaToken | undefined {
    return token === undefined ? undefined : this.tokens.get(token);
  }

  /** The live token, or the answer Meta gives: no token 2500, unknown 190, killed 190/460, expired 190/463. */
  check(token: string | undefined): MetaToken | MetaAnswer {
    if (token === undefined || token === '') return metaErrors.noToken();
    const found = this.tokens.get(token);
    if (found === undefined) return metaErrors.invalidToken();
    if (found.dead) return metaErrors.revokedToken();
    if (this.now() >= found.expiresAt) return metaErrors.expiredToken(found.expiresAt, this.now());
    return found;
  }

  /** The user removed the app (or changed their password): all their tokens answer 190/460. */
  killUser(userId: string): void {
    for (const t of this.tokens.values()) if (t.userId === userId) t.dead = true;
  }

  /** Every token issued so far is past its expiry. */
  expireAll(): void {
    for (const t of this.tokens.values()) t.expiresAt = Math.min(t.expiresAt, this.now());
  }
}

// --- Reading requests ------------------------------------------------------------------------------

/** `Authorization: Bearer <t>` (or `OAuth <t>`, as rupload takes it), else the `access_token` parameter. */
export function readAccessToken(req: FastifyRequest, params: Record<string, string>): string | undefined {
  const header = /^(?:Bearer|OAuth)\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
  return header ?? params.access_token;
}

/** A multipart body: its fields, and its files' bytes. */
export class MetaMultipart {
  fields: Record<string, string> = {};
  files: Record<string, { bytes: Buffer; mime: string; filename: string }> = {};

  summary() {
    return {
      fields: redactParams(this.fields),
      files: Object.fromEntries(Object.entries(this.files).map(([name, f]) => [name, { bytes: f.bytes.length, mime: f.mime, filename: f.filename }])),
    };
  }
}

/** The parsed body: JSON or form as the parsers left it, multipart as `MetaMultipart`, raw bytes as a Buffer. */
export async function readBody(req: FastifyRequest): Promise<unknown> {
  if (!req.isMultipart()) return req.body;
  const body = new MetaMultipart();
  for await (const part of req.parts()) {
    if (part.type === 'file') body.files[part.fieldname] = { bytes: await part.toBuffer(), mime: part.mimetype, filename: part.filename };
    else body.fields[part.fieldname] = String(part.value);
  }
  return body;
}

/** Every parameter as a string: the query string, then the body's (form, JSON, multipart fields); later ones win.
 * JSON values that are not strings are kept as JSON text (`true`, `12`, `["1","2"]`). */
export function readParams(req: FastifyRequest, body: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const add = (source: unknown) => {
    if (!isObject(source)) return;
    for (const [name, value] of Object.entries(source)) {
      const first: unknown = Array.isArray(value) && source !== body ? value[0] : value;
      if (first === undefined || first === null) continue;
      out[name] = typeof first === 'string' ? first : JSON.stringify(first);
    }
  };
  add(req.query);
  add(body instanceof MetaMultipart ? body.fields : body);
  return out;
}

/** `1,2,3` or `["1","2","3"]` (or `[1,2]`) as a list of ids; undefined when it is neither. */
export function parseIdList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (text.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed) && parsed.every((v) => typeof v === 'string' || typeof v === 'number')) return parsed.map(String);
    } catch {
      return undefined;
    }
    return undefined;
  }
  return text === '' ? [] : text.split(',').map((s) => s.trim());
}

// --- Recording -------------------------------------------------------------------------------------

export interface MetaRecordedRequest {
  method: string;
  /** With the query string; secret parameters as `<redacted>`. */
  path: string;
  /** Lower-case names; `authorization` holds only its scheme (`Bearer`, `OAuth`). */
  headers: Record<string, string>;
  /** JSON or form bodies as parsed; multipart as `{fields, files: {name: {bytes (a count), mime, filename}}}`;
   * secret parameters as `<redacted>`. */
  body: unknown;
}

const SECRET_PARAMS = ['access_token', 'client_secret', 'fb_exchange_token', 'input_token'];
export const REDACTED = '<redacted>';

export function redactQuery(pathWithQuery: string): string {
  const q = pathWithQuery.indexOf('?');
  if (q === -1) return pathWithQuery;
  const query = pathWithQuery
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const name = pair.split('=')[0] ?? '';
      return SECRET_PARAMS.includes(safeDecode(name)) ? `${name}=${REDACTED}` : pair;
    })
    .join('&');
  return `${pathWithQuery.slice(0, q)}?${query}`;
}

function redactParams(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_PARAMS.includes(k) ? REDACTED : v]));
}

export function createRecorder(): { requests: MetaRecordedRequest[]; record(req: FastifyRequest, body: unknown): void } {
  const requests: MetaRecordedRequest[] = [];
  return {
    requests,
    record(req, body) {
      const headers = recordedHeaders(req);
      const recorded =
        body instanceof MetaMultipart ? body.summary() : isObject(body) ? redactParams(body) : Buffer.isBuffer(body) ? { bytes: body.length } : body;
      requests.push({ method: req.method, path: redactQuery(req.url), headers, body: recorded ?? null });
    },
  };
}

// --- Faults ----------------------------------------------------------------------------------------

/** The kit's faults: an answer without doing anything (the body defaults to Meta's code 2 for a 5xx, code 1 otherwise), or the work done and the connection cut. */
export type MetaFault = Fault;
export { FaultQueue };

export function faultAnswer(fault: { status: number; body?: unknown; headers?: Record<string, string> }): MetaAnswer {
  if (fault.body !== undefined) return { status: fault.status, body: fault.body, ...(fault.headers === undefined ? {} : { headers: fault.headers }) };
  const base = fault.status >= 500 ? metaErrors.serviceError() : metaError({ message: 'An unknown error occurred', code: 1, is_transient: true }, fault.status);
  return { status: fault.status, body: base.body, ...(fault.headers === undefined ? {} : { headers: fault.headers }) };
}

// --- Fetching media like Meta's crawler ------------------------------------------------------------

export interface MediaFetchRules {
  /** Accepted `Content-Type`s (without parameters), lower case. */
  accept: string[];
  /** Bytes. */
  maxBytes: number;
  /** 5,000 ms unless told ("within a few seconds"). */
  timeoutMs?: number;
}

export type MediaFetchFailure =
  /** Not an http(s) URL. */
  | 'bad_url'
  /** Connection refused, reset, DNS, ... */
  | 'unreachable'
  | 'timeout'
  /** 3xx: the fakes follow no redirect. */
  | 'redirect'
  /** Another non-2xx status. */
  | 'status'
  /** Content-Type not accepted. */
  | 'type'
  /** Longer than maxBytes (by Content-Length, Content-Range or the bytes read). */
  | 'size';

export type MediaFetchResult =
  | { ok: true; url: string; status: number; contentType: string; bytes: Buffer }
  | { ok: false; url: string; status: number | null; contentType: string | null; reason: MediaFetchFailure; detail: string; byteCount: number };

export const CRAWLER_USER_AGENT = 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)';

/** GETs the URL as Meta's crawler does (its user agent, `Range: bytes=0-<maxBytes>`), follows no redirect, takes 206
 * or 200, and checks the type and size. */
export async function fetchMediaLikeMeta(url: string, rules: MediaFetchRules): Promise<MediaFetchResult> {
  const fail = (
    reason: MediaFetchFailure,
    detail: string,
    status: number | null = null,
    contentType: string | null = null,
    byteCount = 0,
  ): MediaFetchResult => ({
    ok: false,
    url,
    status,
    contentType,
    reason,
    detail,
    byteCount,
  });
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return fail('bad_url', 'not a URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return fail('bad_url', `unsupported scheme ${parsed.protocol}`);
  const signal = AbortSignal.timeout(rules.timeoutMs ?? 5_000);
  let response: Response;
  try {
    response = await fetch(parsed, {
      method: 'GET',
      redirect: 'manual',
      signal,
      headers: { 'user-agent': CRAWLER_USER_AGENT, range: `bytes=0-${rules.maxBytes}`, accept: '*/*', 'accept-encoding': 'identity' },
    });
  } catch (error) {
    return signal.aborted
      ? fail('timeout', 'no answer in time')
      : fail('unreachable', error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error));
  }
  const contentType = response.headers.get('content-type');
  const mime = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const drop = async () => {
    try {
      await response.body?.cancel();
    } catch {
      // nothing to do
    }
  };
  if (response.status >= 300 && response.status < 400) {
    await drop();
    return fail('redirect', `redirect (${response.status}) to ${response.headers.get('location') ?? '?'}`, response.status, contentType);
  }
  if (response.status !== 200 && response.status !== 206) {
    await drop();
    return fail('status', `HTTP ${response.status}`, response.status, contentType);
  }
  if (!rules.accept.includes(mime)) {
    await drop();
    return fail('type', `Content-Type ${contentType ?? '(none)'}`, response.status, contentType);
  }
  const total =
    response.status === 206
      ? Number(/\/(\d+)\s*$/.exec(response.headers.get('content-range') ?? '')?.[1] ?? Number.NaN)
      : Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(total) && total > rules.maxBytes) {
    await drop();
    return fail('size', `${total} bytes, the limit is ${rules.maxBytes}`, response.status, contentType, total);
  }
  const chunks: Buffer[] = [];
  let read = 0;
  let tooLong = false;
  try {
    if (response.body !== null) {
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        const buffer = Buffer.from(chunk);
        read += buffer.length;
        if (read > rules.maxBytes) {
          tooLong = true;
          break; // leaving the loop cancels the body
        }
        chunks.push(buffer);
      }
    }
    if (tooLong) return fail('size', `more than ${rules.maxBytes} bytes`, response.status, contentType, read);
  } catch (error) {
    return signal.aborted
      ? fail('timeout', 'the body did not arrive in time', response.status, contentType, read)
      : fail('unreachable', error instanceof Error ? error.message : String(error), response.status, contentType, read);
  }
  return { ok: true, url, status: response.status, contentType: contentType ?? '', bytes: Buffer.concat(chunks) };
}

export interface MetaFetchRecord {
  url: string;
  /** null when nothing answered. */
  status: number | null;
  contentType: string | null;
  /** Bytes read (or announced, for a refused size). */
  bytes: number;
}

export function toFetchRecord(result: MediaFetchResult): MetaFetchRecord {
  return result.ok
    ? { url: result.url, status: result.status, contentType: result.contentType, bytes: result.bytes.length }
    : { url: result.url, status: result.status, contentType: result.contentType, bytes: result.byteCount };
}

// --- The server ------------------------------------------------------------------------------------

/** `v25.0`, `v1.0`: any `v<digits>.<digits>`. */
export const GRAPH_VERSION = /^v\d+\.\d+$/;

export function isGraphVersion(version: string | undefined): boolean {
  return version !== undefined && GRAPH_VERSION.test(version);
}

/** A route under any Graph version: `/:version` + path (the handler checks the version with `isGraphVersion`;
 * `metaRoute` does it for you). */
export function versioned(path: string): string {
  return `/:version${path}`;
}

export async function createMetaApp(options: { bodyLimit?: number } = {}): Promise<FastifyInstance> {
  const limit = options.bodyLimit ?? 64 * MIB;
  const app = Fastify({ logger: false, bodyLimit: limit });
  await app.register(multipart, { limits: { fileSize: limit } });
  acceptEmptyJson(app, '(#100) The request body is not valid JSON.');
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, raw, done) => {
    done(null, Object.fromEntries(new URLSearchParams(typeof raw === 'string' ? raw : raw.toString('utf8'))));
  });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, raw, done) => done(null, raw));
  app.setErrorHandler((error: Error & { statusCode?: number }, _req, reply) => {
    const status = error.statusCode ?? 500;
    const answer =
      status < 500
        ? metaError({ message: error.message.startsWith('(#') ? error.message : `(#100) ${error.message}`, code: 100 }, status)
        : metaErrors.serviceError();
    return reply.code(answer.status).send(answer.body);
  });
  app.setNotFoundHandler((req, reply) => {
    const answer = metaErrors.unknownPath(req.url.split('?')[0] ?? req.url);
    return reply.code(answer.status).send(answer.body);
  });
  return app;
}

export interface MetaRouteContext {
  req: FastifyRequest;
  /** Route parameters (`version` included for versioned routes). */
  params: Record<string, string>;
  /** Query and body parameters merged (see `readParams`). */
  query: Record<string, string>;
  body: unknown;
  /** From `Authorization` or the `access_token` parameter. */
  token: string | undefined;
}

/**
 * A route that records the request, takes a planned fault for its target, runs the handler, adds the headers and
 * answers; `commitThenDrop` runs the handler, then destroys the socket. A versioned route (`versioned(...)`) answers
 * Meta's unknown-path error when `:version` is not `v<d>.<d>`.
 */
export function metaRoute<T extends string>(
  app: FastifyInstance,
  route: {
    method: 'GET' | 'POST' | 'DELETE';
    url: string;
    /** The fault target; a function when one route serves several (a container or a media id). */
    target: T | ((ctx: MetaRouteContext) => T);
    recorder: { record(req: FastifyRequest, body: unknown): void };
    faults: FaultQueue<T>;
    handle: (ctx: MetaRouteContext) => MetaAnswer | Promise<MetaAnswer>;
    /** Headers on every answer of this route (faults included), e.g. the usage header. */
    headers?: (ctx: MetaRouteContext, answer: MetaAnswer) => Record<string, string>;
  },
): void {
  app.route({
    method: route.method,
    url: route.url,
    handler: async (req: FastifyRequest, reply: FastifyReply) => {
      const body = await readBody(req);
      route.recorder.record(req, body);
      const params = (req.params ?? {}) as Record<string, string>;
      const query = readParams(req, body);
      const ctx: MetaRouteContext = { req, params, query, body, token: readAccessToken(req, query) };
      let answer: MetaAnswer;
      let drop = false;
      if ('version' in params && !isGraphVersion(params.version)) {
        answer = metaErrors.unknownPath(req.url.split('?')[0] ?? req.url);
      } else {
        const fault = route.faults.take(typeof route.target === 'function' ? route.target(ctx) : route.target);
        if (fault?.kind === 'answer') {
          answer = faultAnswer(fault);
        } else {
          answer = await route.handle(ctx);
          drop = fault?.kind === 'commitThenDrop';
        }
      }
      if (drop) {
        req.raw.socket.destroy();
        return reply;
      }
      const headers = { ...route.headers?.(ctx, answer), ...answer.headers };
      // A body given as text is sent as it is (JSON written by hand, e.g. a number too big for a double).
      if (typeof answer.body === 'string' && headers['content-type'] === undefined) headers['content-type'] = 'application/json; charset=UTF-8';
      return reply
        .code(answer.status)
        .headers(headers)
        .send(answer.body ?? '');
    },
  });
}

/** Listens on 127.0.0.1, a free port; the origin. */
export async function listenLocal(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
}

// --- Small things ----------------------------------------------------------------------------------

/** Numeric string ids counting up from `first` (Meta's ids are numeric strings of 15–19 digits). */
export function numericIds(first: bigint): () => string {
  let next = first;
  return () => String(next++);
}

/** Meta's timestamp format: `2026-11-27T13:00:00+0000`. */
export function metaTimestamp(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, '+0000');
}

/** As Meta writes times in the expired-token message: `Friday, 27-Nov-26 05:00:00 PST`. */
export function pacificTime(ms: number): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: 'America/Los_Angeles',
      weekday: 'long',
      day: '2-digit',
      month: 'short',
      year: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    })
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  );
  return `${parts.weekday}, ${parts.day}-${parts.month}-${parts.year} ${parts.hour}:${parts.minute}:${parts.second} ${parts.timeZoneName}`;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return text;
  }
}

// --- Instagram and Threads login -------------------------------------------------------------------

/** A user of a Meta fake. */
export interface MetaUser {
  /** Numeric, as a string. */
  id: string;
  username: string;
  name: string;
}

export interface MetaAuthorization {
  /** The consent page's query, as sent. */
  query: Record<string, string>;
  outcome: 'approved' | 'refused' | 'invalid';
  /** Why the consent page refused to go on (`invalid`). */
  reason: string | null;
  /** Who approved (`approved`). */
  userId: string | null;
}

export interface MetaLoginConfig<T extends string> {
  app: FastifyInstance;
  recorder: { record(req: FastifyRequest, body: unknown): void };
  faults: FaultQueue<T>;
  /** The fault target of the three token endpoints. */
  target: T;
  tokens: MetaTokenStore;
  now: () => number;
  clientId: string;
  clientSecret: string;
  /** The users a consent may approve as, by id. */
  users: Map<string, MetaUser>;
  /** The scope every consent must ask (`instagram_business_basic`, `threads_basic`). */
  requiredScope: string;
  /** The scopes the consent page knows; any other is refused ("Invalid Scopes"). */
  knownScopes: string[];
  /** `ig_exchange_token` / `th_exchange_token`. */
  exchangeGrant: string;
  /** `ig_refresh_token` / `th_refresh_token`. */
  refreshGrant: string;
  /** The code exchange's success answer for this platform. */
  codeAnswer: (token: MetaToken) => MetaAnswer;
}

export interface MetaLogin {
  authorizations: MetaAuthorization[];
  /** The user the consent page approves as from now on (the first user added until then). */
  consentAs(userId: string): void;
  /** The next consent is refused: back to redirect_uri with `error=access_denied`. */
  refuseNextConsent(): void;
  /** Successful refreshes so far. */
  refreshes(): number;
  /** A long-lived token issued now, without the round trip. */
  grant(userId: string, scopes: string[]): MetaToken;
}

const CODE_TTL_MS = HOUR_MS;
const SHORT_TTL_MS = HOUR_MS;
const REFRESH_MIN_AGE_MS = DAY_MS;

/** The rejected-exchange body of the Business Login and Threads token pages (not Graph's error shape). */
function oauthRejected(message: string): MetaAnswer {
  return { status: 400, body: { error_type: 'OAuthException', code: 400, error_message: message } };
}

/**
 * The login both Instagram (Business Login for Instagram) and Threads use:
 * - `GET /oauth/authorize` (client_id, redirect_uri, response_type=code, scope comma- or space-separated, state):
 *   302 to `redirect_uri?code=…&state=…#_`, or `?error=access_denied&error_reason=user_denied&error_description=
 *   The+user+denied+your+request&state=…`; an invalid request gets an HTML error page (400);
 * - `POST /oauth/access_token` (client_id, client_secret, grant_type=authorization_code, redirect_uri, code): the code
 *   lives 1 hour and is used once (spent by any exchange that names it); a rejection is
 *   `{error_type:'OAuthException', code:400, error_message:'Matching code was not found or was already used'}`;
 * - `GET /access_token` (grant_type=<exchange>, client_secret, access_token=<short>): a 60-day token,
 *   `{access_token, token_type:'bearer', expires_in}`;
 * - `GET /refresh_access_token` (grant_type=<refresh>, access_token=<long>): a new 60-day token from a live long-lived
 *   token at least 24 hours old.
 */
export function installMetaLogin<T extends string>(config: MetaLoginConfig<T>): MetaLogin {
  const { app, recorder, tokens, now } = config;
  const authorizations: MetaAuthorization[] = [];
  const codes = new Map<string, { userId: string; redirectUri: string; scopes: string[]; issuedAt: number }>();
  let consentUserId: string | null = null;
  let refuseNext = false;
  let refreshCount = 0;

  const issueLong = (userId: string, scopes: string[]) => tokens.issue(userId, { kind: 'long', ttlMs: LONG_LIVED_TTL_S * 1000, scopes });
  const longAnswer = (token: MetaToken): MetaAnswer => ({
    status: 200,
    body: { access_token: token.token, token_type: 'bearer', expires_in: Math.floor((token.expiresAt - now()) / 1000) },
  });

  app.get('/oauth/authorize', async (req, reply) => {
    recorder.record(req, null);
    const query: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.query as Record<string, unknown>)) query[name] = Array.isArray(value) ? String(value[0]) : String(value);
    const scopes = (query.scope ?? '').split(/[,\s]+/).filter((s) => s !== '');
    const unknown = scopes.filter((s) => !config.knownScopes.includes(s));
    const reason =
      query.client_id !== config.clientId
        ? 'Invalid platform app (unknown client_id)'
        : query.response_type !== 'code'
          ? 'response_type must be code'
          : query.redirect_uri === undefined || !/^https?:\/\//.test(query.redirect_uri)
            ? 'redirect_uri missing or not an http(s) URL'
            : unknown.length > 0
              ? `Invalid Scopes: ${unknown.join(', ')}`
              : !scopes.includes(config.requiredScope)
                ? `${config.requiredScope} is required`
                : null;
    if (reason !== null) {
      authorizations.push({ query, outcome: 'invalid', reason, userId: null });
      return reply.code(400).type('text/html').send(`<p>Sorry, this page isn't available.</p><!-- ${reason} -->`);
    }
    const back = new URL(query.redirect_uri!);
    if (refuseNext) {
      refuseNext = false;
      authorizations.push({ query, outcome: 'refused', reason: null, userId: null });
      back.searchParams.set('error', 'access_denied');
      back.searchParams.set('error_reason', 'user_denied');
      back.searchParams.set('error_description', 'The user denied your request');
      if (query.state !== undefined) back.searchParams.set('state', query.state);
      return reply.redirect(back.href, 302);
    }
    const userId = consentUserId ?? config.users.keys().next().value;
    if (userId === undefined) {
      authorizations.push({ query, outcome: 'invalid', reason: 'no user to consent as (addUser first)', userId: null });
      return reply.code(400).type('text/html').send('<p>No user is signed in to the fake (call addUser).</p>');
    }
    const code = `AQ${randomBytes(48).toString('base64url')}`;
    codes.set(code, { userId, redirectUri: query.redirect_uri!, scopes, issuedAt: now() });
    authorizations.push({ query, outcome: 'approved', reason: null, userId });
    back.searchParams.set('code', code);
    if (query.state !== undefined) back.searchParams.set('state', query.state);
    back.hash = '';
    return reply.redirect(`${back.href}#_`, 302);
  });

  metaRoute(app, {
    method: 'POST',
    url: '/oauth/access_token',
    target: config.target,
    recorder,
    faults: config.faults,
    handle: ({ query: form }) => {
      if (form.client_id !== config.clientId || form.client_secret !== config.clientSecret) return oauthRejected('Invalid platform app');
      if (form.grant_type !== 'authorization_code') return oauthRejected('Unsupported grant_type');
      const code = form.code === undefined ? undefined : codes.get(form.code);
      if (form.code !== undefined) codes.delete(form.code); // used once, whatever the outcome
      if (code === undefined || now() - code.issuedAt > CODE_TTL_MS) return oauthRejected('Matching code was not found or was already used');
      if (form.redirect_uri !== code.redirectUri)
        return oauthRejected(
          'Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the OAuth dialog request',
        );
      return config.codeAnswer(tokens.issue(code.userId, { kind: 'short', ttlMs: SHORT_TTL_MS, scopes: code.scopes }));
    },
  });

  metaRoute(app, {
    method: 'GET',
    url: '/access_token',
    target: config.target,
    recorder,
    faults: config.faults,
    handle: ({ query, token }) => {
      if (query.grant_type !== config.exchangeGrant) return metaErrors.invalidParameter(`Unsupported grant_type: ${query.grant_type ?? '(none)'}`);
      if (query.client_secret !== config.clientSecret) return metaError({ message: 'Error validating client secret.', code: 1 });
      const found = tokens.check(token);
      if (isMetaAnswer(found)) return found;
      if (found.kind !== 'short') return metaErrors.invalidParameter('The access token is not a short-lived token');
      return longAnswer(issueLong(found.userId, found.scopes));
    },
  });

  metaRoute(app, {
    method: 'GET',
    url: '/refresh_access_token',
    target: config.target,
    recorder,
    faults: config.faults,
    handle: ({ query, token }) => {
      if (query.grant_type !== config.refreshGrant) return metaErrors.invalidParameter(`Unsupported grant_type: ${query.grant_type ?? '(none)'}`);
      const found = tokens.check(token);
      if (isMetaAnswer(found)) return found;
      if (found.kind !== 'long') return metaErrors.invalidParameter('Only a long-lived access token can be refreshed');
      if (now() - found.issuedAt < REFRESH_MIN_AGE_MS) return metaErrors.invalidParameter('The access token must be at least 24 hours old to be refreshed');
      if (!found.scopes.includes(config.requiredScope)) return metaErrors.permission(`The ${config.requiredScope} permission is required to refresh the token`);
      refreshCount += 1;
      return longAnswer(issueLong(found.userId, found.scopes));
    },
  });

  return {
    authorizations,
    consentAs(userId) {
      if (!config.users.has(userId)) throw new Error(`no user ${userId}`);
      consentUserId = userId;
    },
    refuseNextConsent() {
      refuseNext = true;
    },
    refreshes: () => refreshCount,
    grant: (userId, scopes) => {
      if (!config.users.has(userId)) throw new Error(`no user ${userId}`);
      return issueLong(userId, scopes);
    },
  };
}

// --- Fields ----------------------------------------------------------------------------------------

/** The `fields` parameter as a list (`a,b{c,d},e` keeps nested braces with their field). */
export function parseFields(value: string | undefined): string[] {
  if (value === undefined || value.trim() === '') return [];
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of value) {
    if (ch === '{') depth += 1;
    if (ch === '}') depth -= 1;
    if (ch === ',' && depth === 0) {
      if (current.trim() !== '') out.push(current.trim());
      current = '';
    } else current += ch;
  }
  if (current.trim() !== '') out.push(current.trim());
  return out;
}

/**
 * A node's answer for the fields asked (`id` always), or Meta's nonexisting-field error for the first field the
 * node does not have. Fields whose value is undefined are left out, as Meta leaves out empty fields.
 */
export function pickFields(node: Record<string, unknown>, known: string[], asked: string[], errorType = 'OAuthException'): MetaAnswer {
  const fields = asked.length === 0 ? ['id'] : asked.map((f) => f.replace(/\{.*$/, ''));
  const missing = fields.find((f) => !known.includes(f) && f !== 'id');
  if (missing !== undefined) return metaErrors.nonexistingField(missing, errorType);
  const body: Record<string, unknown> = {};
  for (const f of fields) if (node[f] !== undefined) body[f] = node[f];
  body.id = node.id;
  return { status: 200, body };
}

/** A rolling-window counter of events (publishes, containers) by the clock. */
export function countSince(times: number[], since: number): number {
  return times.filter((t) => t > since).length;
}
