import { expect } from 'vitest';
import type { Schemas, TestApi } from './api.js';
import type { TestUser } from './fixtures.js';
import { noteSecret } from './run-log.js';

type Connection = Schemas['Connection'];

/**
 * A person connecting accounts as a browser does: Herald's connection started, the platform's
 * consent page (a fake that approves at once) followed to Herald's callback, then the connection
 * and the accounts it connected, as the API shows them.
 */
export async function connectThroughConsent(
  api: TestApi,
  u: TestUser,
  body: Record<string, unknown>,
): Promise<{ connection: Connection; accounts: Schemas['Account'][]; callback: { status: number; body: unknown } }> {
  const started = await api.request<Connection>({ method: 'POST', url: '/api/v1/connections', key: u.key, body });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const atPlatform = await fetch(started.body.authorizationUrl ?? '', { redirect: 'manual' });
  expect(atPlatform.status).toBe(302);
  const back = new URL(atPlatform.headers.get('location') ?? '');
  // The code and the state are permissions: the run's log must hold neither (checked when the run ends).
  for (const name of ['code', 'state']) noteSecret(back.searchParams.get(name) ?? '');
  const callback = await api.request({ method: 'GET', url: `${back.pathname}${back.search}` });
  const connection = (await api.request<Connection>({ method: 'GET', url: `/api/v1/connections/${started.body.id}`, key: u.key })).body;
  const listed = (await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key })).body.data;
  const accounts = connection.accountIds.map((id) => listed.find((a) => a.id === id)).filter((a): a is Schemas['Account'] => a !== undefined);
  return { connection, accounts, callback };
}
