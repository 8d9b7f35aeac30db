import { describe, expect, it } from 'vitest';
import { useTestApi, type InvalidRequest, type Schemas } from '../support/api.js';
import { account, userWithKey } from '../support/fixtures.js';

const api = useTestApi();

describe('requests are held to the spec', () => {
  it('refuses PATCH {} (minProperties: 1) and keeps a post type a patch leaves out', async () => {
    const u = await userWithKey(api.db);
    const acc = await account(api.db, u.userId, 'mastodon');
    const created = await api.request<Schemas['Post']>({
      method: 'POST',
      url: '/api/v1/posts',
      key: u.key,
      body: { accountIds: [acc], caption: 'hi', postType: 'thread' },
    });
    expect(created.status).toBe(201);
    const empty = await api.request<InvalidRequest>({ method: 'PATCH', url: `/api/v1/posts/${created.body.id}`, key: u.key, body: {} });
    expect(empty.status).toBe(400);
    expect(empty.body.code).toBe('invalid_request');
    const patched = await api.request<Schemas['Post']>({ method: 'PATCH', url: `/api/v1/posts/${created.body.id}`, key: u.key, body: { caption: 'changed' } });
    expect(patched.status).toBe(200);
    expect(patched.body.postType).toBe('thread');
  });
});

describe('query parameters', () => {
  it('refuses a query parameter an API operation does not take, naming it, and leaves the public pages tolerant', async () => {
    const u = await userWithKey(api.db);
    for (const url of ['/api/v1/posts?limt=10', '/api/v1/accounts?limt=10', '/api/v1/platforms?limt=10']) {
      const res = await api.request<InvalidRequest>({ method: 'GET', url, key: u.key });
      expect({ url, status: res.status, code: res.body.code, details: res.body.details }).toEqual({
        url,
        status: 400,
        code: 'invalid_request',
        details: [{ code: 'unrecognized_keys', expected: 'never', received: 'limt', path: ['limt'], message: "Unrecognized key: 'limt'" }],
      });
    }
    const listed = await api.request({ method: 'GET', url: '/api/v1/posts?limit=10', key: u.key });
    expect(listed.status).toBe(200);
    // Not the API: others add parameters to these URLs (a platform to the consent callback, a CDN to media).
    expect((await api.request({ method: 'GET', url: '/health/live?probe=1' })).status).toBe(200);
  });
});

describe('webhook event types', () => {
  it('lets one endpoint subscribe to every event type the spec lists', async () => {
    const u = await userWithKey(api.db);
    const eventTypes: Schemas['WebhookEventType'][] = [
      'post.published',
      'post.partial',
      'post.failed',
      'target.published',
      'target.failed',
      'target.unknown',
      'account.needs_reconnect',
      'account.expiring',
      'account.connected',
      'ping',
    ];
    const res = await api.request<Schemas['Webhook']>({
      method: 'POST',
      url: '/api/v1/webhooks',
      key: u.key,
      body: { url: 'https://example.org/hook', eventTypes },
    });
    expect(res.status).toBe(201);
    expect(res.body.eventTypes).toEqual(eventTypes);
  });
});
