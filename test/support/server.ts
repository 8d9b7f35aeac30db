import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { readEnvironment, type Environment } from '../../src/cli/wiring/configuration.js';
import type { DemoPost, DemoSeed } from '../../src/domain/demo.js';
import { startServer, type RunningServer, type ServerHooks } from '../../src/cli/wiring/serve.js';
import { createTestDatabase, type TestDatabase } from './database.js';

/** The server in this process as the socket tests run it: always on 127.0.0.1, on a port the system picks, logging nothing. */
export function startTestServer(env: Partial<Environment>, hooks?: ServerHooks): Promise<RunningServer> {
  return startServer({ ...readEnvironment({}), ...env, host: '127.0.0.1', port: 0, logLevel: 'silent' }, hooks);
}

export interface DemoServer {
  server: RunningServer;
  demo: DemoSeed;
  /** The sandbox post the demo schedules a minute ahead. */
  demoPost: DemoPost;
  /** The server's data folder (uploads go under media/). */
  dataDir: string;
  /** Its database, on the run's server. */
  databaseUrl: string;
}

/**
 * One server for the whole test file, on a socket, with a data folder of its own and a fresh
 * database on the run's server, migrated and seeded with the demo.
 */
export function useDemoServer(env: Partial<Environment> = {}): DemoServer {
  const running = {} as DemoServer;
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    running.dataDir = await mkdtemp(join(tmpdir(), 'herald-server-'));
    database = await createTestDatabase();
    running.databaseUrl = database.url;
    let demo: [DemoSeed, DemoPost] | undefined;
    running.server = await startTestServer(
      { dataDir: running.dataDir, databaseUrl: database.url, migrateOnStart: true, demoOnFirstStart: true, ...env },
      { onDemoSeeded: (seed, post) => (demo = [seed, post]) },
    );
    await running.server.ready;
    if (!demo) throw new Error('the server did not seed the demo');
    [running.demo, running.demoPost] = demo;
  }, 120_000);
  afterAll(async () => {
    await running.server?.close();
    await database?.close();
    if (running.dataDir !== undefined) await rm(running.dataDir, { recursive: true, force: true });
  });
  return running;
}
