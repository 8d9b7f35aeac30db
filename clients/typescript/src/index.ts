/**
 * @herald/client: a typed client for the Herald API.
 *
 * Every path, parameter, request body and response (success and error) is typed from
 * `generated/openapi.d.ts`, which `npm run generate` makes from `openapi/openapi.yaml`. Nothing
 * here describes a request or response by hand, so a change to the spec that breaks callers
 * breaks their compilation.
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from '../../../generated/openapi.js';

export type { components, operations, paths };

/** The openapi-fetch client over Herald's paths: `GET`, `POST`, `DELETE`… with typed results. */
export type HeraldClient = Client<paths>;

/** The spec's named schemas, e.g. `HeraldSchemas['Post']` or `HeraldSchemas['Error']`. */
export type HeraldSchemas = components['schemas'];

export interface HeraldClientOptions extends Omit<ClientOptions, 'baseUrl' | 'headers'> {
  /** Where Herald runs, without the `/api/v1` prefix: e.g. `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** An API key (`hrld_…`), sent as `Authorization: Bearer <key>` on every request. */
  apiKey: string;
  /** More headers for every request. `Authorization` is always the API key. */
  headers?: Record<string, string>;
}

/**
 * A client whose every request carries the bearer API key.
 *
 * ```ts
 * const herald = createHeraldClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: process.env.HERALD_KEY! });
 * const { data, error } = await herald.GET('/api/v1/accounts');
 * ```
 */
export function createHeraldClient({ baseUrl, apiKey, headers, ...options }: HeraldClientOptions): HeraldClient {
  if (typeof apiKey !== 'string' || apiKey.trim() === '') throw new TypeError('createHeraldClient: apiKey is required');
  if (typeof baseUrl !== 'string' || !/^https?:\/\//.test(baseUrl))
    throw new TypeError(`createHeraldClient: baseUrl must be an http(s) URL, got ${String(baseUrl)}`);
  return createClient<paths>({
    ...options,
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: { ...headers, Authorization: `Bearer ${apiKey}` },
  });
}
