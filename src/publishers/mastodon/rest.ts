import { networkMessage } from '../../net/network-message.js';
import { parseJson } from '../http-outcomes.js';

/**
 * Calls to a Mastodon instance's REST API over the injected fetch. Nothing is thrown for what the
 * network or the instance does: every answer is a value, status and headers kept (the rate-limit
 * reset is a header).
 */

export type RestFailure =
  /** The instance answered with an error status; `error` is its JSON body's message when it sent one. */
  | { kind: 'http'; status: number; error: string | null; headers: Headers }
  /** No answer: refused connection, DNS failure, reset, timeout. */
  | { kind: 'network'; message: string }
  /** The SSRF guard refused the URL before anything was sent. */
  | { kind: 'not_allowed'; message: string };

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

export function createRest(fetch: typeof globalThis.fetch, instance: string, accessToken: string): Rest {
  const base = instance.replace(/\/+$/, '');
  const host = hostOf(instance);
  return async <T>(call: RestCall): Promise<RestResult<T>> => {
    const headers: Record<string, string> = { authorization: `Bearer ${accessToken}`, ...call.headers };
    let body: string | FormData | undefined;
    if (call.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(call.json);
    } else if (call.form !== undefined) {
      body = call.form;
    }
    try {
      const response = await fetch(`${base}${call.path}`, { method: call.method, headers, body, redirect: 'error', signal: AbortSignal.timeout(call.timeoutMs) });
      const text = await response.text();
      const parsed = parseJson(text);
      if (response.ok && parsed !== undefined) return { ok: true, status: response.status, data: parsed as T };
      const error = typeof parsed === 'object' && parsed !== null && typeof (parsed as { error?: unknown }).error === 'string' ? (parsed as { error: string }).error : null;
      return { ok: false, failure: { kind: 'http', status: response.status, error, headers: response.headers } };
    } catch (thrown) {
      if (thrown instanceof Error && thrown.name === 'UrlNotAllowedError') return { ok: false, failure: { kind: 'not_allowed', message: thrown.message } };
      return { ok: false, failure: { kind: 'network', message: networkMessage(thrown, host) } };
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
