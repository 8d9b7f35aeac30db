import { defineConfig } from 'vitest/config';

// The Postgres-only suite needs a server it can stop and start; it runs when TEST_DATABASE_URL names one.
const onPostgres = process.env.TEST_DATABASE_URL !== undefined && process.env.TEST_DATABASE_URL !== '';
// The Redis suite (rate limits shared by several processes) runs when TEST_REDIS_URL names a server.
const withRedis = process.env.TEST_REDIS_URL !== undefined && process.env.TEST_REDIS_URL !== '';
// Suites that never open a database run once, on the embedded run: the Postgres run would only repeat them.
const databaseFree = [
  'test/client/spec-breaks-client.test.ts',
  'test/consumers/**',
  'test/contract/generated-types.test.ts',
  'test/contract/storable-text-rule.test.ts',
  'test/docs/**',
  'test/domain/**',
  'test/http/routes-match-spec.test.ts',
  'test/net/**',
  'test/publishers/**',
  'test/secrets/**',
  'test/webhook-sender/**',
  'test/worker/due-watch.test.ts',
  'test/worker/lanes.test.ts',
];
// Suites about the embedded database's folder, which a Postgres run does not have.
const embeddedOnly = ['test/embedded/**'];
const only = [...(onPostgres ? [...databaseFree, ...embeddedOnly] : ['test/postgres/**']), ...(withRedis ? [] : ['test/redis/**'])];

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
