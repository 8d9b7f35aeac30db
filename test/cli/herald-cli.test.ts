import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEnvironment } from '../../src/cli/wiring/configuration.js';
import { migrations } from '../../src/db/migrations/index.js';
import type { Schemas } from '../support/api.js';
import { herald, json } from '../support/cli.js';
import { fetchChecked } from '../support/fetch-checked.js';
import { makeMediaFiles } from '../support/media-files.js';
import { readFile, writeFile } from 'node:fs/promises';
import { TEST_DATABASE_URL, createTestDatabase, type TestDatabase } from '../support/database.js';
import { makeDataDir, removeDataDir } from '../support/data-dir.js';
import { stringMatching } from '../support/matchers.js';
import { startTestServer } from '../support/server.js';
import { until } from '../support/wait.js';

// The CLI runs against a fresh database on TEST_DATABASE_URL's server, or the embedded default in a data folder of its own.
let dataDir: string;
let database: TestDatabase | undefined;
let env: Record<string, string>;

beforeAll(async () => {
  dataDir = await makeDataDir('herald-cli-');
  env = { HERALD_DATA_DIR: dataDir };
  if (TEST_DATABASE_URL !== undefined) {
    database = await createTestDatabase();
    env.DATABASE_URL = database.url;
  }
});

afterAll(async () => {
  await database?.close();
  await removeDataDir(dataDir);
});

const ID = (prefix: string) => stringMatching(new RegExp(`^${prefix}_[0-9a-z]{26}$`));

// Each command is a fresh process, so these tests run longer than the rest.
describe('herald CLI', { timeout: 180_000 }, () => {
  it('refuses to work on a database that is not migrated, then migrates it once', async () => {
    if (TEST_DATABASE_URL === undefined) {
      const early = await herald(['user', 'create'], env);
      expect(early.code).not.toBe(0);
      const all = Object.keys(migrations);
      expect(early.stderr).toBe(`herald: The database has ${all.length} pending migration(s); run "herald db migrate" first\n`);
      expect(early.stdout).toBe('');
      expect(json(await herald(['db', 'migrate'], env))).toEqual({ migrated: all });
    }
    expect(json(await herald(['db', 'migrate'], env))).toEqual({ migrated: [] });
  });

  it('sets up a user, an organization, keys, accounts and media, each printing one JSON object', async () => {
    const user = json<{ id: string }>(await herald(['user', 'create', '--name', 'Ada'], env));
    expect(user).toEqual({ id: ID('usr') });
    const org = json<{ id: string }>(await herald(['org', 'create', '--name', 'Acme'], env));
    expect(org).toEqual({ id: ID('org') });
    expect(json(await herald(['org', 'add-member', '--org', org.id, '--user', user.id], env))).toEqual({ orgId: org.id, userId: user.id, role: 'member' });

    const key = json<{ id: string; key: string; expiresAt: string | null }>(
      await herald(['key', 'create', '--user', user.id, '--expires-at', '2099-01-01T00:00:00+01:00'], env),
    );
    expect(key).toEqual({ id: ID('key'), key: stringMatching(/^hrld_/), expiresAt: '2098-12-31T23:00:00.000Z' });
    const revoked = json(await herald(['key', 'revoke', '--id', key.id], env));
    expect(revoked).toEqual({ id: key.id, revokedAt: stringMatching(/Z$/) });

    const own = json<{ id: string }>(
      await herald(['account', 'connect', '--platform', 'x', '--username', 'ada', '--display-name', 'Ada', '--user', user.id], env),
    );
    expect(own).toEqual({ id: ID('acc') });
    const shared = json<{ id: string }>(await herald(['account', 'connect', '--platform', 'linkedin', '--username', 'acme', '--org', org.id], env));
    const gone = json<{ id: string }>(await herald(['account', 'disconnect', '--id', shared.id], env));
    expect(gone).toEqual({ id: shared.id, disconnectedAt: stringMatching(/Z$/) });

    const video = json(
      await herald(
        [
          'media',
          'add',
          '--user',
          user.id,
          '--kind',
          'video',
          '--mime',
          'video/mp4',
          '--bytes',
          '1000',
          '--width',
          '1080',
          '--height',
          '1920',
          '--duration-ms',
          '15000',
        ],
        env,
      ),
    );
    expect(video).toEqual({ id: ID('med') });

    const files = makeMediaFiles();
    try {
      const photo = join(dataDir, 'photo.jpg');
      await writeFile(photo, files.jpeg1080x1350);
      expect(json(await herald(['media', 'add', '--user', user.id, '--file', photo], env))).toEqual({ id: ID('med') });
      const pdf = join(dataDir, 'doc.jpg');
      await writeFile(pdf, files.pdf);
      const refused = await herald(['media', 'add', '--user', user.id, '--file', pdf], env);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toBe('herald: Unsupported media type: application/pdf\n');
    } finally {
      files.cleanup();
    }
  });

  it('prints its version, the one in package.json', async () => {
    const { version } = JSON.parse(await readFile(join(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const result = await herald([flag], env);
      expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
  });

  it('fails with one line on stderr and a non-zero exit for bad input', async () => {
    const cases: [string[], string][] = [
      [['account', 'connect', '--platform', 'myspace', '--username', 'a', '--user', 'usr_x'], 'herald: Unknown platform: myspace'],
      [['account', 'connect', '--platform', 'x', '--username', 'a'], 'herald: one of --user or --org is required'],
      [
        ['account', 'connect', '--platform', 'x', '--username', 'a', '--user', 'u', '--org', 'o'],
        "herald: option '--user <id>' cannot be used with option '--org <id>'",
      ],
      [
        ['media', 'add', '--user', 'usr_x', '--kind', 'gif', '--mime', 'image/gif', '--bytes', '1'],
        "herald: option '--kind <kind>' argument 'gif' is invalid. Expected image or video.",
      ],
      [
        ['media', 'add', '--user', 'usr_x', '--kind', 'image', '--mime', 'image/png', '--bytes', '-1'],
        "herald: option '--bytes <n>' argument '-1' is invalid. Expected a non-negative integer.",
      ],
      [
        ['key', 'create', '--user', 'usr_x', '--expires-at', '2001-01-01T00:00:00Z'],
        "herald: option '--expires-at <iso8601>' argument '2001-01-01T00:00:00Z' is invalid. Expected a time in the future.",
      ],
      [['key', 'create', '--user', 'usr_nobody'], 'herald: User not found: usr_nobody'],
      [['key', 'revoke', '--id', 'key_nobody'], 'herald: API key not found: key_nobody'],
      [['org', 'create'], "herald: required option '--name <name>' not specified"],
      [['media', 'add', '--user', 'usr_x', '--kind', 'image'], 'herald: give --file, or all of --kind, --mime and --bytes'],
      [['media', 'add', '--user', 'usr_x', '--file', 'a.jpg', '--bytes', '5'], 'herald: --file reads the facts from the file'],
      [['frobnicate'], "herald: unknown command 'frobnicate'"],
    ];
    for (const [args, message] of cases) {
      const result = await herald(args, env);
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(result.stdout, args.join(' ')).toBe('');
      expect(result.stderr.split('\n').filter(Boolean), args.join(' ')).toHaveLength(1);
      expect(result.stderr, args.join(' ')).toContain(message);
    }
  });

  it('cannot be given NUL or an unpaired surrogate in an argument, so what it stores is storable text', async () => {
    // An argument is a C string, which NUL would end: Node refuses to pass one at all.
    await expect(herald(['org', 'create', '--name', 'a\u0000b'], env)).rejects.toThrow(/without null bytes/);
    // Arguments travel as UTF-8 bytes, and an unpaired surrogate has none: it arrives as U+FFFD.
    const user = json<{ id: string }>(await herald(['user', 'create'], env));
    const { key } = json<{ key: string }>(await herald(['key', 'create', '--user', user.id], env));
    json(await herald(['account', 'connect', '--platform', 'x', '--username', 'a\ud800b', '--display-name', '\udc00', '--user', user.id], env));
    const server = await startTestServer(readEnvironment(env));
    try {
      await server.ready;
      const res = await fetchChecked<{ data: { username: string; displayName: string | null }[] }>(server.url, 'GET', '/api/v1/accounts', { key });
      expect(res.body.data.map(({ username, displayName }) => ({ username, displayName }))).toEqual([{ username: 'a\uFFFDb', displayName: '\uFFFD' }]);
    } finally {
      await server.close();
    }
  });

  it('seeds a demo whose key and curl work against the server', async () => {
    const demo = json<{ userId: string; accounts: { platform: string }[]; media: unknown[]; key: string; curl: string }>(await herald(['demo'], env));
    expect(demo.accounts.map((a) => a.platform)).toEqual(['x', 'instagram', 'linkedin']);
    expect(demo.media).toHaveLength(2);
    expect(demo.curl).toContain(demo.key);

    const server = await startTestServer(readEnvironment(env));
    try {
      await server.ready;
      const res = await fetchChecked<Schemas['AccountList']>(server.url, 'GET', '/api/v1/accounts', { key: demo.key });
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(3);

      // A command connects beside the server (on the embedded default, to the PostgreSQL the server started). The server,
      // which has the key cached, refuses it at the first request after the command revokes it.
      const user = json<{ id: string }>(await herald(['user', 'create', '--name', 'Grace'], env));
      expect(user).toEqual({ id: ID('usr') });
      const made = json<{ id: string; key: string }>(await herald(['key', 'create', '--user', user.id], env));
      for (let i = 0; i < 2; i++) {
        const accounts = await fetchChecked<Schemas['AccountList']>(server.url, 'GET', '/api/v1/accounts', { key: made.key });
        expect(accounts.status).toBe(200);
        expect(accounts.body.data).toEqual([]);
      }
      const refused = await herald(['key', 'create', '--user', 'usr_nobody'], env);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toBe('herald: User not found: usr_nobody\n');
      expect(json(await herald(['key', 'revoke', '--id', made.id], env))).toEqual({ id: made.id, revokedAt: stringMatching(/Z$/) });
      expect((await fetchChecked(server.url, 'GET', '/api/v1/accounts', { key: made.key })).status).toBe(401);
      expect((await fetchChecked(server.url, 'GET', '/api/v1/accounts', { key: demo.key })).status).toBe(200);
    } finally {
      await server.close();
    }
    expect(json(await herald(['user', 'create'], env))).toEqual({ id: ID('usr') });
  });

  it("offboards a member: their scheduled post fails on the organization's account, only an owner disconnects it, and their keys are listed", async () => {
    const server = await startTestServer(readEnvironment(env));
    try {
      await server.ready;
      const owner = json<{ id: string }>(await herald(['user', 'create', '--name', 'Olga'], env));
      const member = json<{ id: string }>(await herald(['user', 'create', '--name', 'Max'], env));
      const org = json<{ id: string }>(await herald(['org', 'create', '--name', 'Acme', '--owner', owner.id], env));
      expect(json(await herald(['org', 'add-member', '--org', org.id, '--user', member.id], env))).toEqual({
        orgId: org.id,
        userId: member.id,
        role: 'member',
      });
      const shared = json<{ id: string }>(await herald(['account', 'connect', '--platform', 'linkedin', '--username', 'acme', '--org', org.id], env));
      const ownerKey = json<{ key: string }>(await herald(['key', 'create', '--user', owner.id], env));
      const memberKey = json<{ id: string; key: string }>(await herald(['key', 'create', '--user', member.id], env));
      const revoked = json<{ id: string; key: string }>(await herald(['key', 'create', '--user', member.id], env));
      json(await herald(['key', 'revoke', '--id', revoked.id], env));
      const expiresAt = new Date(Date.now() + 12_000);
      const expiring = json<{ id: string; key: string }>(await herald(['key', 'create', '--user', member.id, '--expires-at', expiresAt.toISOString()], env));

      const post = await fetchChecked<Schemas['PostCreateResult']>(server.url, 'POST', '/api/v1/posts', {
        key: memberKey.key,
        json: { accountIds: [shared.id], caption: 'For Acme', scheduledAt: new Date(Date.now() + 10_000).toISOString() },
      });
      expect(post.status).toBe(201);
      const refused = await fetchChecked(server.url, 'DELETE', `/api/v1/accounts/${shared.id}`, { key: memberKey.key });
      expect(refused).toMatchObject({ status: 403, body: { error: "Only an owner of the account's organization can disconnect it" } });

      expect(json(await herald(['org', 'remove-member', '--org', org.id, '--user', member.id], env))).toEqual({
        orgId: org.id,
        userId: member.id,
        role: 'member',
      });
      const again = await herald(['org', 'remove-member', '--org', org.id, '--user', member.id], env);
      expect(again).toMatchObject({ code: 1, stdout: '', stderr: `herald: User ${member.id} is not a member of ${org.id}\n` });
      const detail = () => fetchChecked<Schemas['PostDetail']>(server.url, 'GET', `/api/v1/posts/${post.body.id}`, { key: memberKey.key });
      // The removal must land before the post comes due for this test to say anything.
      expect((await detail()).body.status).toBe('scheduled');

      await until('the post to settle', async () => (await detail()).body.status === 'failed');
      expect((await detail()).body.targets).toMatchObject([
        {
          accountId: shared.id,
          status: 'failed',
          platformPostId: null,
          error: { category: 'auth_expired', message: "The post's owner no longer has access to this account" },
        },
      ]);
      expect((await fetchChecked<Schemas['AccountList']>(server.url, 'GET', '/api/v1/accounts', { key: memberKey.key })).body.data).toEqual([]);
      expect(await fetchChecked(server.url, 'DELETE', `/api/v1/accounts/${shared.id}`, { key: ownerKey.key })).toMatchObject({
        status: 200,
        body: { success: true },
      });

      const deputy = json<{ id: string }>(await herald(['user', 'create'], env));
      expect(json(await herald(['org', 'add-member', '--org', org.id, '--user', deputy.id, '--owner'], env))).toEqual({
        orgId: org.id,
        userId: deputy.id,
        role: 'owner',
      });
      expect(json(await herald(['org', 'add-member', '--org', org.id, '--user', deputy.id], env))).toEqual({ orgId: org.id, userId: deputy.id, role: 'owner' });
      expect(json(await herald(['org', 'remove-member', '--org', org.id, '--user', deputy.id], env))).toEqual({
        orgId: org.id,
        userId: deputy.id,
        role: 'owner',
      });
      expect(json(await herald(['key', 'list', '--user', deputy.id], env))).toEqual({ keys: [] });
      for (const [args, message] of [
        [['key', 'list', '--user', 'usr_nobody'], 'herald: User not found: usr_nobody\n'],
        [['org', 'remove-member', '--org', 'org_nobody', '--user', member.id], 'herald: Organization not found: org_nobody\n'],
        [['org', 'create', '--name', 'Ghost', '--owner', 'usr_nobody'], 'herald: User not found: usr_nobody\n'],
      ] as const) {
        expect(await herald([...args], env), args.join(' ')).toMatchObject({ code: 1, stdout: '', stderr: message });
      }

      await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt.getTime() - Date.now() + 100)));
      const listed = await herald(['key', 'list', '--user', member.id], env);
      expect(json(listed)).toEqual({
        keys: [
          { id: memberKey.id, state: 'active', createdAt: stringMatching(/Z$/), expiresAt: null, revokedAt: null },
          { id: revoked.id, state: 'revoked', createdAt: stringMatching(/Z$/), expiresAt: null, revokedAt: stringMatching(/Z$/) },
          { id: expiring.id, state: 'expired', createdAt: stringMatching(/Z$/), expiresAt: expiresAt.toISOString(), revokedAt: null },
        ],
      });
      for (const secret of [memberKey.key, revoked.key, expiring.key]) expect(listed.stdout).not.toContain(secret.slice('hrld_'.length));
    } finally {
      await server.close();
    }
  });
});
