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
