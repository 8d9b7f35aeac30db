import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { ServiceState } from '../../src/api/service-state.js';
import { injectChecked, useTestApi } from '../support/api.js';
import { createTestDatabase } from '../support/database.js';

const api = useTestApi();

describe('health checks', () => {
  it('live and ready on a migrated database, without a key', async () => {
    const live = await api.request({ method: 'GET', url: '/health/live' });
    expect([live.status, live.body]).toEqual([200, { status: 'ok' }]);
    const ready = await api.request({ method: 'GET', url: '/health/ready' });
    expect([ready.status, ready.body]).toEqual([200, { ready: true, database: 'up', migrations: 'applied' }]);
  });

  it('not ready (503, Retry-After) while the service has no database yet, yet live', async () => {
    const app = await buildApp({ context: new ServiceState() });
    try {
      const ready = await injectChecked(app, { method: 'GET', url: '/health/ready' });
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ error: 'Not ready: the database is not open yet', ready: false, database: 'down', migrations: 'unknown' });
      expect(Number(ready.headers['retry-after'])).toBeGreaterThan(0);
      expect((await injectChecked(app, { method: 'GET', url: '/health/live' })).status).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('not ready while migrations are pending, and says how many', async () => {
    const blank = await createTestDatabase({ blank: true });
    const state = new ServiceState();
    state.attach({ ...api.publishing.serviceDeps, db: blank.db });
    const app = await buildApp({ context: state });
    try {
      const ready = await injectChecked<{ error: string; migrations: string }>(app, { method: 'GET', url: '/health/ready' });
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({ ready: false, database: 'up', migrations: 'pending' });
      expect(ready.body.error).toMatch(/^Not ready: \d+ migrations pending; run herald db migrate$/);
    } finally {
      await app.close();
      await blank.close();
    }
  });
});
