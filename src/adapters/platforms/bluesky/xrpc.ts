import { readBoundedText } from '../../net/bounded-body.js';
import { noAnswer, parseJson, type NoAnswer } from '../http-outcomes.js';

/**
 * A small XRPC client over the injected fetch. It never throws for what the network or the
 * platform does: every answer is a value, with the status and headers kept (a 429's reset is in a
 * header, which AtpAgent hides).
 */

export type XrpcFailure =
  /** The service answered with an error status; `error` and `message` come from its JSON body when it sent one. */
  { kind: 'http'; status: number; error: string | null; message: string | null; headers: Headers } | NoAnswer;

export type XrpcResult<T> = { ok: true; data: T } | { ok: false; failure: XrpcFailure };

export interface XrpcCall {
  /** The NSID, e.g. com.atproto.repo.putRecord. */
  method: string;
  query?: Record<string, string>;
  /** A JSON body (the call is a POST). */
  json?: unknown;
  /** A raw body with its content type (the call is a POST). */
  bytes?: { data: Uint8Array; mime: string };
  /** A POST with no body (refreshSession). */
  post?: boolean;
  token?: string;
}

export type Xrpc = <T>(call: XrpcCall) => Promise<XrpcResult<T>>;

/** The most of one JSON answer Herald reads, after decompression: a session or a record's ref is well under 1 KiB. */
export const ANSWER_LIMIT_BYTES = 2 * 1024 * 1024;

export function createXrpc(fetch: typeof globalThis.fetch, service: string, timeoutMs: number): Xrpc {
  const base = service.replace(/\/+$/, '');
  const host = hostOf(service);
  return async <T>(call: XrpcCall): Promise<XrpcResult<T>> => {
    const url = new URL(`${base}/xrpc/${call.method}`);
    for (const [key, value] of Object.entries(call.query ?? {})) url.searchParams.set(key, value);
    const headers: Record<string, string> = {};
    let body: string | Uint8Array | undefined;
    if (call.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(call.json);
    } else if (call.bytes !== undefined) {
      headers['content-type'] = call.bytes.mime;
      body = call.bytes.data;
    }
    if (call.token !== undefined) headers.authorization = `Bearer ${call.token}`;
    const post = body !== undefined || call.post === true;
    try {
      const response = await fetch(url, {
        method: post ? 'POST' : 'GET',
        headers,
        body,
        redirect: 'error',
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await readBoundedText(response, ANSWER_LIMIT_BYTES);
      if (response.ok) {
        const data = parseJson(text === '' ? '{}' : text);
        if (data !== undefined) return { ok: true, data: data as T };
      }
      const { error, message } = errorBody(text);
      return { ok: false, failure: { kind: 'http', status: response.status, error, message, headers: response.headers } };
    } catch (thrown) {
      return { ok: false, failure: noAnswer(thrown, host) };
    }
  };
}

/** Clients "should be robust to non-JSON error responses" (the XRPC spec): a proxy's HTML page gives nulls. */
function errorBody(text: string): { error: string | null; message: string | null } {
  const parsed = parseJson(text);
  if (typeof parsed !== 'object' || parsed === null) return { error: null, message: null };
  const { error, message } = parsed as Record<string, unknown>;
  return { error: typeof error === 'string' ? error : null, message: typeof message === 'string' ? message : null };
}

export function hostOf(service: string): string {
  try {
    return new URL(service).host;
  } catch {
    return 'the Bluesky service';
  }
}
