import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { ServiceState } from '../../src/api/service-state.js';
import { openPostgres } from '../../src/db/database.js';
import type { MediaStorage } from '../../src/domain/ports/media-storage.js';
import { buffer } from 'node:stream/consumers';
import { injectChecked, type Schemas } from '../support/api.js';
import { account, userWithKey } from '../support/fixtures.js';
import { testMediaSettings } from '../support/media-settings.js';
import { solidPng } from '../support/png.js';
import { startTestPublishing } from '../support/publishing.js';
import { useProxiedDatabase } from '../support/tcp-proxy.js';

// A COMMIT that reaches PostgreSQL and commits, while Herald sees its connection die before the
// answer: the Idempotency-Key's answer was kept in that same transaction, so the client's retry is
// answered with what was made, and nothing is made twice.
const pg = useProxiedDatabase();

async function withApp(run: (app: Awaited<ReturnType<typeof buildApp>>, storage: MediaStorage) => Promise<void>): Promise<void> {
  const media = testMediaSettings();
  const handle = openPostgres(pg.url);
  const state = new ServiceState();
  const publishing = await startTestPublishing(pg.database.db, media);
  state.attach({ ...publishing.serviceDeps, db: handle.db });
  const app = await buildApp({ context: state });
  try {
    await run(app, publishing.serviceDeps.storage);
  } finally {
    await app.close();
    await publishing.close();
    await handle.close();
    media.cleanup();
  }
}

function form(file: Buffer, altText: string): { payload: Buffer; headers: Record<string, string> } {
  const boundary = 'lostcommit';
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="altText"\r\n\r\n${altText}\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

describe('a create whose COMMIT succeeded but whose answer was lost', () => {
  it('createPost: the retry with the same key replays the post, and there is one post', async () => {
    const u = await userWithKey(pg.database.db);
    const acc = await account(pg.database.db, u.userId);
    await withApp(async (app) => {
      const request = { method: 'POST' as const, url: '/api/v1/posts', key: u.key, headers: { 'idempotency-key': 'lost-post' } };
      const body = { accountIds: [acc], caption: 'Committed once' };
      const dropped = pg.proxy.commitThenDrop();
      const lost = await injectChecked(app, { ...request, body });
      await dropped;
      expect(lost.status).toBe(503);
      const retry = await injectChecked<Schemas['PostCreateResult']>(app, { ...request, body });
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotency-replayed']).toBe('true');
      const saved = await pg.database.db.selectFrom('posts').select('id').where('user_id', '=', u.userId).execute();
      expect(saved).toEqual([{ id: retry.body.id }]);
    });
  });

  it('uploadMedia: the retry replays the media, whose file is still there, and there is one', async () => {
    const u = await userWithKey(pg.database.db);
    await withApp(async (app, storage) => {
      const png = solidPng(8, 8, [255, 0, 0]);
      const request = { method: 'POST' as const, url: '/api/v1/media', key: u.key };
      const dropped = pg.proxy.commitThenDrop();
      const first = form(png, 'Red');
      const lost = await injectChecked(app, { ...request, payload: first.payload, headers: { ...first.headers, 'idempotency-key': 'lost-media' } });
      await dropped;
      expect(lost.status).toBe(503);
      const again = form(png, 'Red');
      const retry = await injectChecked<Schemas['Media']>(app, {
        ...request,
        payload: again.payload,
        headers: { ...again.headers, 'idempotency-key': 'lost-media' },
      });
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotency-replayed']).toBe('true');
      const saved = await pg.database.db.selectFrom('media_assets').select('id').where('owner_user_id', '=', u.userId).execute();
      expect(saved).toEqual([{ id: retry.body.id }]);
      // The file the committed row names was kept.
      expect(await buffer(await storage.open(`${u.userId}/${retry.body.id}`))).toEqual(png);
    });
  });

  it('connectAccount (a sandbox account): the retry replays the account, and there is one', async () => {
    const u = await userWithKey(pg.database.db);
    await withApp(async (app) => {
      const request = { method: 'POST' as const, url: '/api/v1/accounts', key: u.key, headers: { 'idempotency-key': 'lost-account' } };
      const body = { platform: 'x', username: 'once' };
      const dropped = pg.proxy.commitThenDrop();
      const lost = await injectChecked(app, { ...request, body });
      await dropped;
      expect(lost.status).toBe(503);
      const retry = await injectChecked<Schemas['Account']>(app, { ...request, body });
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotency-replayed']).toBe('true');
      const saved = await pg.database.db.selectFrom('accounts').select('id').where('owner_user_id', '=', u.userId).execute();
      expect(saved).toEqual([{ id: retry.body.id }]);
    });
  });

  it('createWebhook: the retry replays the endpoint with its secret, and there is one endpoint', async () => {
    const u = await userWithKey(pg.database.db);
    await withApp(async (app) => {
      const request = { method: 'POST' as const, url: '/api/v1/webhooks', key: u.key, headers: { 'idempotency-key': 'lost-webhook' } };
      const body = { url: 'https://example.com/hook', eventTypes: ['post.published'] };
      const dropped = pg.proxy.commitThenDrop();
      const lost = await injectChecked(app, { ...request, body });
      await dropped;
      expect(lost.status).toBe(503);
      const retry = await injectChecked<Schemas['WebhookWithSecret']>(app, { ...request, body });
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotency-replayed']).toBe('true');
      expect(retry.body.secret).toMatch(/^whsec_/);
      const saved = await pg.database.db.selectFrom('webhook_endpoints').select('id').where('user_id', '=', u.userId).execute();
      expect(saved).toEqual([{ id: retry.body.id }]);
    });
  });
});
