import { defineConfig } from 'vitest/config';

// Without TEST_DATABASE_URL the run starts an embedded PostgreSQL of its own; with it, it runs on that server
// (CI: Debian's PostgreSQL 15, a second version), which only the suites that use a database need.
const onNamedServer = process.env.TEST_DATABASE_URL !== undefined && process.env.TEST_DATABASE_URL !== '';
// The Redis suite (rate limits shared by several processes) runs when TEST_REDIS_URL names a server.
const withRedis = process.env.TEST_REDIS_URL !== undefined && process.env.TEST_REDIS_URL !== '';
// Suites that never open a database run once, in the default run: on a named server they would only repeat it.
const databaseFree = [
  'test/client/spec-breaks-client.test.ts',
  'test/consumers/**',
  'test/contract/generated-types.test.ts',
  'test/contract/storable-text-rule.test.ts',
  'test/contract/readme-configuration.test.ts',
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
// The embedded server in a data folder: always the PostgreSQL of the npm package, whatever server is named.
const embeddedOnly = ['test/embedded/**'];
const exclude = [...(onNamedServer ? [...databaseFree, ...embeddedOnly] : []), ...(withRedis ? [] : ['test/redis/**'])];

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude,
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two test files at a time, beside the PostgreSQL server they share: the machines have 2 cores.
    maxWorkers: 2,
  },
});
