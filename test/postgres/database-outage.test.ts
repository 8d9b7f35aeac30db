import { describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db/database.js';
import { buildApp } from '../../src/api/app.js';
import { ServiceState } from '../../src/api/service-state.js';
import { injectChecked } from '../support/api.js';
import { fetchChecked } from '../support/fetch-checked.js';
import { userWithKey } from '../support/fixtures.js';
import { testMediaSettings } from '../support/media-settings.js';
import { startTestPublishing } from '../support/publishing.js';
import { startTestServer } from '../support/server.js';
import { useProxiedDatabase } from '../support/tcp-proxy.js';

// The database goes away and comes back: a proxy in front of the run's server, which the test cuts and restores.
const pg = useProxiedDatabase();

describe('when Postgres goes away', () => {
  it('answers 503 Database not available while it is down, and recovers by itself when it is back', async () => {
    const { key } = await userWithKey(pg.database.db);
    const media = testMediaSettings();
    const handle = openPostgres(pg.url);
    const state = new ServiceState();
    const publishing = await startTestPublishing(pg.database.db, media);
    state.attach({ ...publishing.serviceDeps, db: handle.db });
    const app = await buildApp({ context: state });
    const get = () => injectChecked(app, { method: 'GET', url: '/api/v1/accounts', key });
    try {
      expect((await get()).status).toBe(200);

      await pg.proxy.stop();
      const down = await get();
      expect(down.status).toBe(503);
      expect(down.body).toEqual({ error: 'Database not available', code: 'database_unavailable' });
      const create = await injectChecked(app, { method: 'POST', url: '/api/v1/posts', key, body: { accountIds: ['acc_a'] } });
      expect(create.status).toBe(503);

      await pg.proxy.start();
      expect((await get()).status).toBe(200);
    } finally {
      await app.close();
      await publishing.close();
      await handle.close();
      media.cleanup();
    }
  });

  it('starts while Postgres is down, answering 503 Auth not initialized until it can reach it', async () => {
    const { key } = await userWithKey(pg.database.db);
    await pg.proxy.stop();
    const server = await startTestServer({ databaseUrl: pg.url, migrateOnStart: true });
    try {
      const early = await fetchChecked(server.url, 'GET', '/api/v1/accounts', { key });
      expect(early.status).toBe(503);
      expect(early.body).toEqual({ error: 'Auth not initialized', code: 'not_ready' });

      await pg.proxy.start();
      await server.ready;
      const later = await fetchChecked(server.url, 'GET', '/api/v1/accounts', { key });
      expect(later.status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
