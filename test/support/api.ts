import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, expect, vi } from 'vitest';
import type { components } from '../../generated/openapi.js';
import type { Database } from '../../src/db/schema.js';
import { watchApiKeys } from '../../src/domain/api-key-cache.js';
import { revokeKey } from '../../src/domain/api-keys.js';
import { buildApp } from '../../src/api/app.js';
import { ServiceState } from '../../src/api/service-state.js';
import { expectMatchesSpec } from './contract.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { noteSecretsOf, runLogger } from './run-log.js';
import { unusedPort } from './ports.js';
import { testMediaSettings, type TestMediaSettings } from './media-settings.js';
import { startTestPublishing, type TestPublishing } from './publishing.js';

/** Bodies as the spec defines them: the types generated from it, never local copies. */
export type Schemas = components['schemas'];

/** The body of an `Invalid request` answer, which always carries `details`. */
export type InvalidRequest = Required<Schemas['Error']>;

export interface ApiRequest {
  method: 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH';
  url: string;
  key?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Sent as is, instead of `body` as JSON. */
  payload?: string | Buffer;
}

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: T;
}

export interface TestApi {
  app: FastifyInstance;
  database: TestDatabase;
  db: Kysely<Database>;
  state: ServiceState;
  media: TestMediaSettings;
  publishing: TestPublishing;
  /** Injects a request and checks the response against the spec before returning it. */
  request<T = unknown>(req: ApiRequest): Promise<ApiResponse<T>>;
}

/** Injects through Fastify (no socket) and validates the response against the spec. */
export async function injectChecked<T>(app: FastifyInstance, req: ApiRequest): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...req.headers };
  if (req.key !== undefined) headers.authorization = `Bearer ${req.key}`;
  let payload = req.payload;
  if (payload === undefined && req.body !== undefined) {
    payload = JSON.stringify(req.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await app.inject({ method: req.method, url: req.url, headers, ...(payload === undefined ? {} : { payload }) });
  const isJson = String(res.headers['content-type']).startsWith('application/json');
  const body: unknown = res.body === '' ? undefined : isJson ? JSON.parse(res.body) : res.body;
  const observed = { method: req.method, url: req.url, status: res.statusCode, headers: res.headers, body };
  expectMatchesSpec(observed);
  noteSecretsOf(req.body, body);
  return observed as ApiResponse<T>;
}

/**
 * Revokes a key as `herald key revoke` does, and returns once the app has heard the database
 * announce it: the announcement comes on the app's own connection, a moment after the commit.
 */
export async function revokeHeard(api: TestApi, id: string): Promise<void> {
  const cache = api.state.apiKeyCache();
  const before = cache?.mark() ?? 0;
  await revokeKey(api.db, id, new Date());
  await vi.waitFor(() => expect(cache?.mark()).toBeGreaterThan(before), { timeout: 5000, interval: 2 });
}

/** Limits no test file reaches, so suites that send many requests from one key are not refused; the rate-limit tests set their own. */
export const UNLIMITED = {
  perKeyPerMinute: 1_000_000,
  writesPerKeyPerMinute: 1_000_000,
  perAddressPerMinute: 1_000_000,
  consentPerAddressPerMinute: 1_000_000,
};

/** One app on one fresh database for the whole test file; the tests build their own data in it. */
export function useTestApi(
  options: {
    env?: () => Record<string, string>;
    /** Also serve the app over a socket on 127.0.0.1, as HERALD_PUBLIC_URL (platforms that fetch media from Herald reach it there). */
    listen?: boolean;
  } = {},
): TestApi {
  const api = {} as TestApi;
  let stopWatchingKeys = async () => {};
  beforeAll(async () => {
    api.database = await createTestDatabase();
    api.db = api.database.db;
    api.media = testMediaSettings();
    api.state = new ServiceState();
    const port = options.listen === true ? await unusedPort() : null;
    const listening: Record<string, string> = port === null ? {} : { HERALD_PUBLIC_URL: `http://127.0.0.1:${port}` };
    api.publishing = await startTestPublishing(api.db, api.media, {}, { ...options.env?.(), ...listening });
    // Keys are cached as the server caches them, so every test also shows that a change to a key is seen at once.
    const keys = await watchApiKeys(api.database);
    stopWatchingKeys = keys.stop;
    api.state.attach(api.publishing.serviceDeps, keys.cache);
    api.app = await buildApp({ context: api.state, rateLimits: { limits: UNLIMITED }, loggerInstance: runLogger() });
    api.request = (req) => injectChecked(api.app, req);
    if (port !== null) await api.app.listen({ host: '127.0.0.1', port });
  });
  afterAll(async () => {
    await api.app?.close();
    await stopWatchingKeys();
    await api.publishing?.close();
    await api.database?.close();
    api.media?.cleanup();
  });
  return api;
}
