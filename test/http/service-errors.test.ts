import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db/database.js';
import { buildApp } from '../../src/api/app.js';
import { ServiceState } from '../../src/api/service-state.js';
import { injectChecked, useTestApi } from '../support/api.js';
import { userWithKey } from '../support/fixtures.js';
import { anyString } from '../support/matchers.js';
import { unusedPort } from '../support/ports.js';

const api = useTestApi();

describe('responses outside the operations', () => {
  it('answers an unknown route with 404 in the error shape', async () => {
    for (const [method, url] of [
      ['GET', '/nothing-here'],
      ['GET', '/api/v2/posts'],
      ['PUT', '/api/v1/posts'],
      ['GET', '/api/v1/posts/abc/extra'],
    ] as const) {
      const res = await api.request({ method, url });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Not found', code: 'not_found' });
    }
  });

  it('answers 503 Auth not initialized before the service has its database', async () => {
    const app = await buildApp({ context: new ServiceState() });
    try {
      const res = await injectChecked(app, { method: 'GET', url: '/api/v1/accounts', key: 'hrld_anything' });
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ error: 'Auth not initialized', code: 'not_ready' });
      expect(res.headers['retry-after']).toBe('5');
    } finally {
      await app.close();
    }
  });

  it('serves requests once the database is attached', async () => {
    const state = new ServiceState();
    const app = await buildApp({ context: state });
    try {
      const u = await userWithKey(api.db);
      expect((await injectChecked(app, { method: 'GET', url: '/api/v1/accounts', key: u.key })).status).toBe(503);
      state.attach(api.publishing.serviceDeps);
      expect((await injectChecked(app, { method: 'GET', url: '/api/v1/accounts', key: u.key })).status).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('answers 503 Database not available, promptly, when Postgres cannot be reached', async () => {
    const closedPort = await unusedPort();
    const handle = openPostgres(`postgres://postgres@127.0.0.1:${closedPort}/herald`);
    const state = new ServiceState();
    state.attach({ ...api.publishing.serviceDeps, db: handle.db });
    const app = await buildApp({ context: state });
    try {
      for (const req of [
        { method: 'GET', url: '/api/v1/accounts', key: 'hrld_x' },
        { method: 'POST', url: '/api/v1/posts', key: 'hrld_x', body: { accountIds: ['acc_a'] } },
      ] as const) {
        const res = await injectChecked(app, req);
        expect(res.status).toBe(503);
        expect(res.body).toEqual({ error: 'Database not available', code: 'database_unavailable' });
      }
    } finally {
      await app.close();
      await handle.close();
    }
  });
});

describe('unexpected failures', () => {
  it('answer 500 Internal server error, and neither the response nor the log carries SQL or a stack', async () => {
    const state = new ServiceState();
    // Every query now names a schema that does not exist: a failure that is not the database being down.
    state.attach({ ...api.publishing.serviceDeps, db: api.db.withSchema('no_such_schema') });
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const app = await buildApp({ context: state, logger: { level: 'info', stream } });
    try {
      const { key } = await userWithKey(api.db);
      const res = await injectChecked(app, { method: 'GET', url: '/api/v1/posts', key });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: 'Internal server error', code: 'internal_error' });
      const failure = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'request failed');
      expect(failure).toMatchObject({ level: 50, reqId: anyString(), status: 500, errorCode: anyString() });
      const log = lines.join('');
      for (const leak of ['no_such_schema', 'select', 'api_keys', key, ' at ']) expect(log).not.toContain(leak);
    } finally {
      await app.close();
    }
  });
});
