import { expect } from 'vitest';
import type { ApiResponse, Schemas, TestApi } from './api.js';
import type { TestUser } from './fixtures.js';
import { noteSecret } from './run-log.js';

type Connection = Schemas['Connection'];

/**
 * A browser opening a connection's consent link at Herald (`authorizationUrl`): the cookie Herald
 * binds it with (`name=value`, as the browser sends it back) and the platform's consent page it
 * is sent on to.
 */
export async function openConsentLink(api: TestApi, authorizationUrl: string): Promise<{ cookie: string; consentUrl: string }> {
  const link = new URL(authorizationUrl);
  expect(link.pathname).toMatch(/^\/oauth\/start\/[A-Za-z0-9_-]{43}$/);
  // The token and the cookie are permissions: the run's log must hold neither (checked when the run ends).
  noteSecret(link.pathname.slice('/oauth/start/'.length));
  const opened = await api.request({ method: 'GET', url: link.pathname });
  expect(opened.status).toBe(302);
  const cookie = String(opened.headers['set-cookie']).split(';')[0] ?? '';
  noteSecret(cookie.slice(cookie.indexOf('=') + 1));
  return { cookie, consentUrl: String(opened.headers.location) };
}

/** The platform's consent page (a fake that answers at once), followed to where it sends the browser back. */
export async function atPlatform(consentUrl: string): Promise<URL> {
  const answer = await fetch(consentUrl, { redirect: 'manual', signal: AbortSignal.timeout(10_000) });
  expect(answer.status).toBe(302);
  const back = new URL(answer.headers.get('location') ?? '');
  // The code and the state are permissions: the run's log must hold neither (checked when the run ends).
  for (const name of ['code', 'state']) noteSecret(back.searchParams.get(name) ?? '');
  return back;
}

/** The browser back at Herald's callback, with the cookie it holds (or none). */
export async function atCallback(api: TestApi, back: URL, cookie: string | undefined): Promise<ApiResponse<string>> {
  return api.request<string>({ method: 'GET', url: `${back.pathname}${back.search}`, ...(cookie === undefined ? {} : { headers: { cookie } }) });
}

/** One browser from Herald's consent link, through the platform's consent page, back to Herald's callback. */
export async function consentInBrowser(api: TestApi, authorizationUrl: string): Promise<{ consentUrl: URL; back: URL; callback: ApiResponse<string> }> {
  const { cookie, consentUrl } = await openConsentLink(api, authorizationUrl);
  const back = await atPlatform(consentUrl);
  return { consentUrl: new URL(consentUrl), back, callback: await atCallback(api, back, cookie) };
}

/**
 * A person connecting accounts as a browser does: Herald's connection started, its consent link
 * opened, the platform's consent page (a fake that approves at once) followed to Herald's
 * callback, then the connection and the accounts it connected, as the API shows them.
 */
export async function connectThroughConsent(
  api: TestApi,
  u: TestUser,
  body: Record<string, unknown>,
): Promise<{ connection: Connection; accounts: Schemas['Account'][]; callback: { status: number; body: unknown } }> {
  const started = await api.request<Connection>({ method: 'POST', url: '/api/v1/connections', key: u.key, body });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const { callback } = await consentInBrowser(api, started.body.authorizationUrl ?? '');
  const connection = (await api.request<Connection>({ method: 'GET', url: `/api/v1/connections/${started.body.id}`, key: u.key })).body;
  const listed = (await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key })).body.data;
  const accounts = connection.accountIds.map((id) => listed.find((a) => a.id === id)).filter((a): a is Schemas['Account'] => a !== undefined);
  return { connection, accounts, callback };
}
