import { defineConfig } from 'vitest/config';

// The Postgres-only suite needs a server it can stop and start; it runs when TEST_DATABASE_URL names one.
const onPostgres = process.env.TEST_DATABASE_URL !== undefined && process.env.TEST_DATABASE_URL !== '';
// The Redis suite (rate limits shared by several processes) runs when TEST_REDIS_URL names a server.
const withRedis = process.env.TEST_REDIS_URL !== undefined && process.env.TEST_REDIS_URL !== '';
const only = [...(onPostgres ? [] : ['test/postgres/**']), ...(withRedis ? [] : ['test/redis/**'])];

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: only,
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Each test file opens its own embedded database (~0.5 GB); two at a time suits the 2-core machines.
    maxWorkers: 2,
  },
});
