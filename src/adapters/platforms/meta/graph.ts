import { readBoundedText } from '../../net/bounded-body.js';
import { noAnswer, parseJson, type NoAnswer } from '../http-outcomes.js';

/**
 * Meta's Graph APIs (graph.facebook.com, graph.instagram.com, graph.threads.net) as documented
 * (developers.facebook.com/docs/graph-api/guides/error-handling, …/overview/rate-limiting;
 * reference notes in shared/reference/platform-apis-meta-tiktok-youtube.md §1): parameters as a
 * form body (POST) or the query (GET), the token as a Bearer header so it stays out of URLs, errors
 * as `{error: {message, type, code, error_subcode, is_transient, fbtrace_id}}`.
 */

/** The error body every Meta API answers. */
export interface MetaError {
  message: string;
  type: string | null;
  code: number | null;
  subcode: number | null;
  /** Meta's own word that trying again may succeed. */
  transient: boolean;
  /** Meta's text for a person (error_user_msg), where it gave one. */
  userMessage: string | null;
  fbtraceId: string | null;
}

export type GraphFailure = { kind: 'http'; status: number; error: MetaError | null; headers: Headers } | NoAnswer;

export type GraphResult<T> = { ok: true; data: T; headers: Headers } | { ok: false; failure: GraphFailure };

export type GraphParams = Record<string, string | number | boolean | undefined>;

export interface GraphCall {
  method: 'GET' | 'POST';
  /** A path on the API's origin, with the version where the API takes one (`/v25.0/me`). */
  path: string;
  params?: GraphParams;
  /** A multipart body instead of `params` (photos and video chunks as bytes). */
  form?: FormData;
  /** Null for the calls that carry their own credentials (token exchanges). */
  token: string | null;
  timeoutMs: number;
}

export type GraphApi = <T>(call: GraphCall) => Promise<GraphResult<T>>;

/** The most of one answer Herald reads, after decompression. */
const ANSWER_LIMIT_BYTES = 2 * 1024 * 1024;

/** Calls one Meta API origin over the injected fetch; nothing the network or Meta does is thrown, every answer is a value. */
export function createGraphApi(fetch: typeof globalThis.fetch, origin: string): GraphApi {
  const base = origin.replace(/\/$/, '');
  const host = new URL(base).host;
  return async <T>(call: GraphCall): Promise<GraphResult<T>> => {
    const headers: Record<string, string> = {};
    if (call.token !== null) headers.authorization = `Bearer ${call.token}`;
    const query = call.method === 'GET' ? encode(call.params) : '';
    let body: string | FormData | undefined;
    if (call.form !== undefined) body = call.form;
    else if (call.method === 'POST') {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = encode(call.params);
    }
    try {
      const response = await fetch(`${base}${call.path}${query === '' ? '' : `${call.path.includes('?') ? '&' : '?'}${query}`}`, {
        method: call.method,
        headers,
        body,
        redirect: 'error',
        signal: AbortSignal.timeout(call.timeoutMs),
      });
      const text = await readBoundedText(response, ANSWER_LIMIT_BYTES);
      const parsed = text === '' ? {} : parseJson(text);
      if (response.ok && parsed !== undefined && errorOf(parsed) === null) return { ok: true, data: parsed as T, headers: response.headers };
      return { ok: false, failure: { kind: 'http', status: response.status, error: errorOf(parsed), headers: response.headers } };
    } catch (thrown) {
      return { ok: false, failure: noAnswer(thrown, host) };
    }
  };
}

function encode(params: GraphParams | undefined): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params ?? {})) if (value !== undefined) search.set(name, String(value));
  return search.toString();
}

/** Meta's error body, read defensively: each field may be missing. */
export function errorOf(body: unknown): MetaError | null {
  const error = typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined;
  if (typeof error !== 'object' || error === null) return null;
  const e = error as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value.slice(0, 500) : null);
  const number = (value: unknown) => (typeof value === 'number' && Number.isInteger(value) ? value : null);
  return {
    message: text(e.message) ?? 'no message',
    type: text(e.type),
    code: number(e.code),
    subcode: number(e.error_subcode),
    transient: e.is_transient === true,
    userMessage: text(e.error_user_msg),
    fbtraceId: text(e.fbtrace_id),
  };
}

/**
 * When Meta says the throttled account, Page or app may call again: the longest
 * `estimated_time_to_regain_access` (minutes) of X-Business-Use-Case-Usage, or null when it gives none.
 */
export function regainAccessAt(headers: Headers, now: Date): Date | null {
  const usage = parseJson(headers.get('x-business-use-case-usage') ?? '');
  if (typeof usage !== 'object' || usage === null) return null;
  let minutes = 0;
  for (const entries of Object.values(usage as Record<string, unknown>)) {
    if (!Array.isArray(entries)) continue;
    for (const entry of entries as { estimated_time_to_regain_access?: unknown }[]) {
      const m = entry.estimated_time_to_regain_access;
      if (typeof m === 'number' && m > minutes) minutes = m;
    }
  }
  return minutes > 0 ? new Date(now.getTime() + minutes * 60_000) : null;
}

/** Meta's timestamps (`2026-11-27T13:00:00+0000`) in ms; NaN-safe (0 for what cannot be read). */
export function metaTime(value: unknown): number {
  if (typeof value !== 'string') return 0;
  const ms = Date.parse(value.replace(/([+-][0-9]{2})([0-9]{2})$/, '$1:$2'));
  return Number.isNaN(ms) ? 0 : ms;
}
