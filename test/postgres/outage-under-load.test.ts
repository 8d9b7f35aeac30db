import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { UNLIMITED } from '../support/api.js';
import { fetchChecked } from '../support/fetch-checked.js';
import { account, userWithKey } from '../support/fixtures.js';
import { startTestServer } from '../support/server.js';
import { useProxiedDatabase } from '../support/tcp-proxy.js';

// Postgres vanishes (its connections cut, new ones refused, by a proxy in front of the run's server)
// in the middle of a load of keyed creates, and comes back.
const pg = useProxiedDatabase();

const CLIENTS = 6;
const LOAD_MS = 6000;
/** No answer may take longer than this, outage or not: connect and statement timeouts bound it (fetchChecked gives up at 10 s). */
const ANSWER_BOUND_MS = 10_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Postgres stopped under load, then back', () => {
  it('answers 503 quickly meanwhile, loses no acknowledged post, makes none twice, and publishes every one exactly once without a restart', async () => {
    const { userId, key } = await userWithKey(pg.database.db);
    const accounts = [
      await account(pg.database.db, userId, 'x', 'a'),
      await account(pg.database.db, userId, 'linkedin', 'b'),
      await account(pg.database.db, userId, 'threads', 'c'),
    ];
    const server = await startTestServer({ databaseUrl: pg.url, migrateOnStart: true, rateLimits: UNLIMITED });
    await server.ready;
    const statuses = new Map<number, number>();
    const acknowledged = new Set<string>();
    let slowest = 0;
    let readyWhileDown: number | undefined;
    const call = async (path: string, init: { method: 'GET' | 'POST'; body?: unknown; idempotencyKey?: string }) => {
      const started = Date.now();
      const res = await fetchChecked<{ id?: string; error?: string }>(server.url, init.method, path, {
        key,
        ...(init.body === undefined ? {} : { json: init.body }),
        headers: init.idempotencyKey === undefined ? {} : { 'idempotency-key': init.idempotencyKey },
      });
      slowest = Math.max(slowest, Date.now() - started);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status === 503) expect(res.body).toEqual({ error: 'Database not available', code: 'database_unavailable' });
      return res;
    };
    // Each client creates posts due at once, each with its own key, retried with that key until it
    // has an answer that is not 503 or 409 (as a client following the spec would).
    const client = async (n: number) => {
      for (let i = 0; Date.now() < end; i++) {
        const idempotencyKey = randomUUID();
        const body = { accountIds: accounts, caption: `client ${n} post ${i}`, scheduledAt: new Date(Date.now() + 8000).toISOString() };
        for (;;) {
          const res = await call('/api/v1/posts', { method: 'POST', body, idempotencyKey });
          if (res.status === 201) {
            acknowledged.add(res.body.id ?? '');
            break;
          }
          expect([503, 409], JSON.stringify(res.body)).toContain(res.status);
          await sleep(200);
        }
        await call('/api/v1/posts?limit=5', { method: 'GET' });
      }
    };
    const end = Date.now() + LOAD_MS;
    const outage = (async () => {
      await sleep(2000);
      await pg.proxy.stop();
      await sleep(500);
      const ready = await fetchChecked(server.url, 'GET', '/health/ready');
      readyWhileDown = ready.status;
      await sleep(1500);
      await pg.proxy.start();
    })();
    try {
      await Promise.all([outage, ...Array.from({ length: CLIENTS }, (_, n) => client(n))]);
      expect(readyWhileDown).toBe(503);
      expect(statuses.get(503) ?? 0).toBeGreaterThan(0);
      expect(slowest).toBeLessThan(ANSWER_BOUND_MS);
      expect([...statuses.keys()].filter((s) => ![200, 201, 409, 503].includes(s))).toEqual([]);
      expect((await fetchChecked(server.url, 'GET', '/health/ready')).status).toBe(200);

      // Every acknowledged post, and nothing else, with its three targets, published exactly once each.
      const posts = await pg.database.db.selectFrom('posts').select('id').where('user_id', '=', userId).execute();
      expect(posts.map((p) => p.id).sort()).toEqual([...acknowledged].sort());
      let unsettled = -1;
      for (const until = Date.now() + 60_000; unsettled !== 0 && Date.now() < until; await sleep(250)) {
        unsettled = (await pg.database.db.selectFrom('posts').select('id').where('user_id', '=', userId).where('status', '<>', 'published').execute()).length;
      }
      expect(unsettled).toBe(0);
      const perTarget = await pg.database.db
        .selectFrom('post_targets as t')
        .innerJoin('posts as p', 'p.id', 't.post_id')
        .leftJoin('target_parts as tp', (j) => j.onRef('tp.post_id', '=', 't.post_id').onRef('tp.account_id', '=', 't.account_id'))
        .leftJoin('sandbox_outbox as o', 'o.platform_post_id', 'tp.material_key')
        .select(['t.post_id', 't.state', sql<number>`count(o.platform_post_id)::int`.as('sent')])
        .where('p.user_id', '=', userId)
        .groupBy(['t.post_id', 't.account_id', 't.state'])
        .execute();
      expect(perTarget).toHaveLength(acknowledged.size * accounts.length);
      expect(perTarget.filter((t) => t.state !== 'published' || t.sent !== 1)).toEqual([]);
    } finally {
      await server.close();
    }
  }, 120_000);
});
