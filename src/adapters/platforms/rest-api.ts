import { readBoundedText } from '../net/bounded-body.js';
import { noAnswer, parseJson, type NoAnswer } from './http-outcomes.js';
import type { OAuthClient } from './oauth.js';

/** What every live adapter over a JSON API is built with. */
export interface AdapterOptions {
  /** The fetch every call goes through (the SSRF guard's). */
  fetch: typeof globalThis.fetch;
  /** Replaces the origin of the platform's hosts (HERALD_<PLATFORM>_BASE_URL): tests reach a fake there. */
  baseUrl: string | undefined;
  requestTimeoutMs?: number;
}

/** An adapter that refreshes tokens: the app's OAuth client, undefined when this server has no app for the platform. */
export interface OAuthAdapterOptions extends AdapterOptions {
  oauth: OAuthClient | undefined;
}

/** An adapter whose platform fetches the media itself from a public URL of this server. */
export interface PulledMediaOptions {
  /** Why the platform could not fetch a public media URL of this server (not https, not public), or null when it can. */
  publicUrlProblem(url: string): string | null;
}

/** A JSON API's answer to a call that failed: the error status with its parsed body, or no usable answer. */
export type RestFailure = { kind: 'http'; status: number; body: unknown; headers: Headers } | NoAnswer;

/** `text` is the answer as sent, for numbers JSON.parse would round (TikTok's int64 ids). */
export type RestResult<T> = { ok: true; status: number; data: T; headers: Headers; text: string } | { ok: false; failure: RestFailure };

export interface RestCall {
  method: 'GET' | 'POST' | 'PUT';
  /** A path on the API's origin, or an absolute URL the platform gave (an upload session). */
  path: string;
  json?: unknown;
  form?: FormData;
  /** Raw bytes (an upload chunk); none for an empty body. */
  bytes?: Buffer;
  headers?: Readonly<Record<string, string>>;
  timeoutMs: number;
}

/** Calls one JSON API with a Bearer token. */
export type RestApi = <T>(call: RestCall, accessToken: string) => Promise<RestResult<T>>;

/** The most of one JSON answer Herald reads, after decompression. */
const ANSWER_LIMIT_BYTES = 2 * 1024 * 1024;

/** Calls to a JSON API's origin over the injected fetch; nothing the network or the platform does is thrown, every answer is a value. */
export function createRestApi(fetch: typeof globalThis.fetch, origin: string): RestApi {
  const base = origin.replace(/\/$/, '');
  const host = new URL(base).host;
  return async <T>(call: RestCall, accessToken: string): Promise<RestResult<T>> => {
    const headers: Record<string, string> = { ...call.headers, authorization: `Bearer ${accessToken}` };
    let body: string | FormData | Uint8Array | undefined;
    if (call.json !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(call.json);
    } else {
      body = call.form ?? call.bytes;
    }
    try {
      const response = await fetch(/^https?:\/\//.test(call.path) ? call.path : `${base}${call.path}`, {
        method: call.method,
        headers,
        body,
        redirect: 'error',
        signal: AbortSignal.timeout(call.timeoutMs),
      });
      const text = await readBoundedText(response, ANSWER_LIMIT_BYTES);
      const parsed = text === '' ? {} : parseJson(text);
      if (response.ok && parsed !== undefined) return { ok: true, status: response.status, data: parsed as T, headers: response.headers, text };
      return { ok: false, failure: { kind: 'http', status: response.status, body: parsed, headers: response.headers } };
    } catch (thrown) {
      return { ok: false, failure: noAnswer(thrown, host) };
    }
  };
}
