import { expectMatchesSpec } from './contract.js';

export interface FetchInit {
  key?: string;
  json?: unknown;
  form?: FormData;
  headers?: Record<string, string>;
  body?: string;
  /** Sent as a stream: chunked, with no Content-Length. */
  chunked?: Uint8Array;
}

export interface FetchedResponse<T> {
  status: number;
  headers: Record<string, string>;
  body: T;
}

/** A request over a real socket, bounded in time; its response is checked against the spec before it is returned. */
export async function fetchChecked<T = unknown>(baseUrl: string, method: string, path: string, init: FetchInit = {}): Promise<FetchedResponse<T>> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.key !== undefined) headers.authorization = `Bearer ${init.key}`;
  let body: string | FormData | ReadableStream<Uint8Array> | undefined = init.body ?? init.form;
  if (init.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.json);
  }
  const { chunked } = init;
  if (chunked !== undefined) {
    body = new ReadableStream({
      start(controller) {
        controller.enqueue(chunked.subarray(0, chunked.length >> 1));
        controller.enqueue(chunked.subarray(chunked.length >> 1));
        controller.close();
      },
    });
  }
  // A redirect is an answer to check, never a place to go (it may point off this machine).
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(10_000),
    ...(chunked === undefined ? {} : { duplex: 'half' }),
  });
  const text = await res.text();
  const responseHeaders = Object.fromEntries(res.headers);
  const parsed: unknown = text === '' ? undefined : (responseHeaders['content-type'] ?? '').startsWith('application/json') ? JSON.parse(text) : text;
  expectMatchesSpec({ method, url: path, status: res.status, headers: responseHeaders, body: parsed });
  return { status: res.status, headers: responseHeaders, body: parsed as T };
}
