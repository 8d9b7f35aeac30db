import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { readEnvironment } from '../../src/cli/wiring/configuration.js';
import { connectAccount, disconnectAccount } from '../../src/domain/accounts.js';
import { addMember, createOrganization } from '../../src/domain/users.js';
import { buildApp } from '../../src/api/app.js';
import { ServiceState } from '../../src/api/service-state.js';
import { createDependencies } from '../../src/cli/wiring/dependencies.js';
import { injectChecked, useTestApi, type InvalidRequest, type Schemas } from '../support/api.js';
import { runLogger } from '../support/run-log.js';
import { account, userWithKey } from '../support/fixtures.js';

const api = useTestApi();

describe('GET /api/v1/accounts', () => {
  it("lists the caller's own active accounts and those of their organizations, nobody else's", async () => {
    const ada = await userWithKey(api.db, 'Ada');
    const bob = await userWithKey(api.db, 'Bob');
    const own = await connectAccount(api.db, { platform: 'x', username: 'ada', displayName: 'Ada L.', owner: { userId: ada.userId } });
    await account(api.db, bob.userId, 'instagram', 'bob');
    const { id: orgId } = await createOrganization(api.db, 'Acme');
    await addMember(api.db, orgId, ada.userId);
    const shared = await connectAccount(api.db, { platform: 'linkedin', username: 'acme', displayName: null, owner: { orgId } });
    const gone = await account(api.db, ada.userId, 'x', 'old');
    await disconnectAccount(api.publishing.serviceDeps, gone, new Date());

    const res = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: ada.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [
        { id: own.id, platform: 'x', username: 'ada', displayName: 'Ada L.', mode: 'sandbox', health: 'ok', healthMessage: null },
        { id: shared.id, platform: 'linkedin', username: 'acme', displayName: null, mode: 'sandbox', health: 'ok', healthMessage: null },
      ],
    });

    const bobs = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: bob.key });
    expect(bobs.body.data.map((a) => a.username)).toEqual(['bob']);
  });

  it('answers an empty list for a user without accounts', async () => {
    const lone = await userWithKey(api.db);
    const res = await api.request({ method: 'GET', url: '/api/v1/accounts', key: lone.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [] });
  });
});

describe('POST /api/v1/accounts (sandbox)', () => {
  it('connects a sandbox account for the caller, listed with mode sandbox', async () => {
    const u = await userWithKey(api.db);
    const res = await api.request<Schemas['Account']>({
      method: 'POST',
      url: '/api/v1/accounts',
      key: u.key,
      body: { platform: 'tiktok', username: 'ada', displayName: 'Ada' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^acc_/) as unknown,
      platform: 'tiktok',
      username: 'ada',
      displayName: 'Ada',
      mode: 'sandbox',
      health: 'ok',
      healthMessage: null,
    });
    const listed = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key });
    expect(listed.body.data).toEqual([res.body]);
    const row = await api.db.selectFrom('accounts').select(['owner_user_id', 'credentials']).where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ owner_user_id: u.userId, credentials: null });
  });

  it.each([
    [{ platform: 'x' }, [{ path: ['username'], code: 'invalid_type' }]],
    [{ platform: 'x', sandbox: false, username: 'a' }, [{ path: ['credentials'], code: 'invalid_type' }]],
    [{ platform: 'x', credentials: { instance: 'https://example.com', accessToken: 't' } }, [{ path: ['credentials'], code: 'custom' }]],
    [{ platform: 'reddit', credentials: { instance: 'https://example.com', accessToken: 't' } }, [{ path: ['credentials'], code: 'custom' }]],
    [{ platform: 'mastodon', sandbox: true, credentials: { instance: 'https://example.com', accessToken: 't' } }, [{ path: ['sandbox'], code: 'custom' }]],
    [
      { platform: 'bluesky', credentials: { service: 'https://example.com', identifier: 'a' } },
      [{ path: ['credentials', 'appPassword'], code: 'invalid_type' }],
    ],
    [
      { platform: 'mastodon', username: 'me', credentials: { instance: 'https://example.com', accessToken: 't', appPassword: 'p' } },
      [
        { path: ['username'], code: 'unrecognized_keys' },
        { path: ['credentials', 'appPassword'], code: 'unrecognized_keys' },
      ],
    ],
    [{ platform: 'myspace', username: 'a' }, [{ path: ['platform'], code: 'invalid_enum_value' }]],
  ])('refuses %j with details naming the field, and connects nothing', async (body, expected) => {
    const u = await userWithKey(api.db);
    const res = await api.request<InvalidRequest>({ method: 'POST', url: '/api/v1/accounts', key: u.key, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Invalid request');
    expect(res.body.details.map((d) => ({ path: d.path, code: d.code }))).toEqual(expected);
    expect(await api.db.selectFrom('accounts').select('id').where('owner_user_id', '=', u.userId).execute()).toEqual([]);
  });
});

describe('DELETE /api/v1/accounts/{id}', () => {
  it("disconnects the caller's account, and answers 404 for anyone else's", async () => {
    const ada = await userWithKey(api.db);
    const bob = await userWithKey(api.db);
    const id = await account(api.db, ada.userId);
    expect(await api.request({ method: 'DELETE', url: `/api/v1/accounts/${id}`, key: bob.key })).toMatchObject({
      status: 404,
      body: { error: 'Account not found' },
    });
    expect(await api.request({ method: 'DELETE', url: '/api/v1/accounts/acc_nope', key: ada.key })).toMatchObject({ status: 404 });
    expect(await api.request({ method: 'DELETE', url: `/api/v1/accounts/${id}`, key: ada.key })).toMatchObject({ status: 200, body: { success: true } });
    expect((await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: ada.key })).body.data).toEqual([]);
  });
});

describe('POST /api/v1/accounts without HERALD_ALLOW_PRIVATE_NETWORK', () => {
  it('refuses http and private addresses before any request is made, and connects nothing', async () => {
    const env = readEnvironment({ HERALD_SECRET_KEY: randomBytes(32).toString('base64'), HERALD_DATA_DIR: api.media.root });
    const state = new ServiceState();
    state.attach(await createDependencies(env, api.db, runLogger(), api.media));
    const app = await buildApp({ context: state });
    const seen: string[] = [];
    const target = createServer((req, res) => {
      seen.push(req.url ?? '');
      res.end('{}');
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const { port } = target.address() as AddressInfo;
    try {
      const u = await userWithKey(api.db);
      const connect = (instance: string) =>
        injectChecked<{ error: string }>(app, {
          method: 'POST',
          url: '/api/v1/accounts',
          key: u.key,
          body: { platform: 'mastodon', credentials: { instance, accessToken: 't' } },
        });
      for (const instance of [`http://127.0.0.1:${port}`, `https://127.0.0.1:${port}`, 'https://10.0.0.5', 'https://169.254.169.254']) {
        const res = await connect(instance);
        expect(res.status).toBe(400);
        expect(res.body.error).toMatch(/^URL not allowed: /);
      }
      // Refused as the name resolves, with the guard's own answer: neither "Invalid credentials" nor the address it resolved to.
      expect(await connect(`https://localhost:${port}`)).toMatchObject({
        status: 400,
        body: {
          error: 'URL not allowed: localhost is not allowed; only public addresses are allowed (set HERALD_ALLOW_PRIVATE_NETWORK=true for a private network)',
        },
      });
      expect(seen).toEqual([]);
      expect(await api.db.selectFrom('accounts').select('id').where('owner_user_id', '=', u.userId).execute()).toEqual([]);
    } finally {
      await app.close();
      await new Promise((resolve) => target.close(resolve));
    }
  });
});
