import { expect } from 'vitest';
import type { Schemas, TestApi } from './api.js';
import type { TestUser } from './fixtures.js';
import type { MastodonFake } from './mastodon-fake.js';

/** Adds an account to the fake instance and connects it through the API, as a user does; the account, and its id on the instance. */
export async function connectMastodon(
  api: TestApi,
  fake: MastodonFake,
  u: TestUser,
  username: string,
  displayName?: string,
): Promise<{ account: Schemas['Account']; instanceId: string }> {
  const who = fake.addAccount(username, displayName);
  const res = await api.request<Schemas['Account']>({
    method: 'POST',
    url: '/api/v1/accounts',
    key: u.key,
    body: { platform: 'mastodon', credentials: { instance: fake.url, accessToken: who.token } },
  });
  expect(res.status).toBe(201);
  return { account: res.body, instanceId: who.id };
}
