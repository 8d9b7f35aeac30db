import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ChannelHandlers } from '../../src/db/notifications.js';
import { API_KEY_CHANGES_CHANNEL } from '../../src/db/queries/api-keys.js';
import { revokeKey } from '../../src/domain/api-keys.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { userWithKey } from '../support/fixtures.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.close();
});

async function listenerPids(): Promise<number[]> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(`select pid from pg_stat_activity where datname = current_database() and query = $1`, [
      `listen "${API_KEY_CHANGES_CHANNEL}"`,
    ]);
    return rows.map((r) => r.pid);
  } finally {
    await client.end();
  }
}

describe('announcements of key changes on Postgres', () => {
  it('are heard again on a new connection after the listening one is cut, with a deaf spell in between', async () => {
    const heard: string[] = [];
    const states: string[] = [];
    const handlers: ChannelHandlers = { notified: (id) => heard.push(id), listening: () => states.push('listening'), deaf: () => states.push('deaf') };
    const stop = await database.listen(API_KEY_CHANGES_CHANNEL, handlers);
    try {
      expect(states).toEqual(['listening']);
      const [first] = await listenerPids();
      expect(first).toBeTypeOf('number');
      const admin = new pg.Client({ connectionString: database.url });
      await admin.connect();
      await admin.query('select pg_terminate_backend($1)', [first]);
      await admin.end();
      await vi.waitFor(() => expect(states).toEqual(['listening', 'deaf', 'listening']), { timeout: 10_000, interval: 50 });
      expect(await listenerPids()).not.toContain(first);

      const { userId } = await userWithKey(database.db);
      const key = await database.db.selectFrom('api_keys').select('id').where('user_id', '=', userId).executeTakeFirstOrThrow();
      await revokeKey(database.db, key.id, new Date());
      await vi.waitFor(() => expect(heard).toEqual([key.id]), { timeout: 5000, interval: 10 });
    } finally {
      await stop();
    }
    expect(states.at(-1)).toBe('deaf');
    expect(await listenerPids()).toEqual([]);
  });
});
