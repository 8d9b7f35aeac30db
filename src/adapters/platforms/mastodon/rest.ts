import { readBoundedText } from '../../net/bounded-body.js';
import { noAnswer, parseJson, type NoAnswer } from '../http-outcomes.js';

/**
 * Calls to a Mastodon instance's REST API over the injected fetch. Nothing is thrown for what the
 * network or the instance does: every answer is a value, status and headers kept (the rate-limit
 * reset is a header).
 */

export type RestFailure =
  /** The instance answered with an error status; `error` is its JSON body's message when it sent one. */
  { kind: 'http'; status: number; error: string | null; headers: Headers } | NoAnswer;

export type RestResult<T> = { ok: true; status: number; data: T } | { ok: false; failure: RestFailure };

export interface RestCall {
  method: 'GET' | 'POST';
  path: string;
  json?: unknown;
  form?: FormData;
  headers?: Record<string, string>;
  timeoutMs: number;
}

export type Rest = <T>(call: RestCall) => Promise<RestResult<T>>;

/** The most of one JSON answer Herald reads, after decompression: a status or an account is a few KiB. */
export const ANSWER_LIMIT_BYTES = 2 * 1024 * 1024;

export function createRest(fetch: typeof globalThis.fetch, instance: string, accessToken: string): Rest {
  const base = instance.replace(/\/+$/, '');
  const host = hostOf(instance);
  return async <T>(call: RestCall): Promise<RestResult<T>> => {
    // An app registration is made before there is any token.
    const headers: Record<string, string> = { ...(accessToken === '' ? {} : { authorization: `Bearer ${accessToken}` }), ...call.headers };
    let body: string | FormData | undefined;
    if (call.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(call.json);
    } else if (call.form !== undefined) {
      body = call.form;
    }
    try {
      const response = await fetch(`${base}${call.path}`, {
        method: call.method,
        headers,
        body,
        redirect: 'error',
        signal: AbortSignal.timeout(call.timeoutMs),
      });
      const text = await readBoundedText(response, ANSWER_LIMIT_BYTES);
      const parsed = parseJson(text);
      if (response.ok && parsed !== undefined) return { ok: true, status: response.status, data: parsed as T };
      const error =
        typeof parsed === 'object' && parsed !== null && typeof (parsed as { error?: unknown }).error === 'string' ? (parsed as { error: string }).error : null;
      return { ok: false, failure: { kind: 'http', status: response.status, error, headers: response.headers } };
    } catch (thrown) {
      return { ok: false, failure: noAnswer(thrown, host) };
    }
  };
}

export function hostOf(instance: string): string {
  try {
    return new URL(instance).host;
  } catch {
    return 'the Mastodon instance';
  }
}
