import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '../support/api.js';
import { herald, heraldServe, json, type ServeProcess } from '../support/cli.js';
import { operationsExercised, resetExercised } from '../support/contract.js';
import { TEST_DATABASE_URL, createTestDatabase, type TestDatabase } from '../support/database.js';
import { makeDataDir, removeDataDir } from '../support/data-dir.js';
import { fetchChecked } from '../support/fetch-checked.js';
import { makeMediaFiles, type MediaFiles } from '../support/media-files.js';
import { parse } from 'yaml';
import { readFileSync } from 'node:fs';
import { SPEC_PATH } from '../../src/api/contract/specification.js';
import { publicMediaUrl } from '../../src/domain/media/public-media.js';
import { createUrlSigner } from '../../src/adapters/secrets/url-signer.js';
import { startXFake, type XFake } from '../support/x-fake.js';

/**
 * The contract suite: `herald serve` as its own process, set up through the CLI as an operator
 * would, then every operation of the spec driven over HTTP, each response checked against the spec
 * (status, documented headers, body). It fails if an operation of the spec is never exercised.
 */
let dataDir: string;
let database: TestDatabase | undefined;
let env: Record<string, string>;
let service: ServeProcess | undefined;
let baseUrl: string;
let files: MediaFiles;
const ids: Record<string, string> = {};
/** Where the webhook endpoint points: a receiver on 127.0.0.1 answering 204, so no event leaves the machine. */
let receiver: Server;
let receiverUrl: string;
/** X, for the consent flow: a fake written from its documentation. */
let x: XFake;

beforeAll(async () => {
  dataDir = await makeDataDir('herald-contract-');
  files = makeMediaFiles();
  receiver = createServer((_req, res) => res.writeHead(204).end());
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/herald`;
  // The receiver is on a private address, which the service calls only with this set.
  x = await startXFake();
  env = {
    HERALD_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    HERALD_ALLOW_PRIVATE_NETWORK: 'true',
    HERALD_SECRET_KEY: randomBytes(32).toString('base64'),
    HERALD_X_CLIENT_ID: x.clientId,
    HERALD_RETURN_URL_ORIGINS: 'https://app.example.com',
    HERALD_X_CLIENT_SECRET: x.clientSecret,
    HERALD_X_BASE_URL: x.url,
  };
  if (TEST_DATABASE_URL !== undefined) {
    database = await createTestDatabase();
    env.DATABASE_URL = database.url;
  }
  json(await herald(['db', 'migrate'], env));
  ids.ada = json<{ id: string }>(await herald(['user', 'create', '--name', 'Ada'], env)).id;
  ids.bob = json<{ id: string }>(await herald(['user', 'create', '--name', 'Bob'], env)).id;
  ids.org = json<{ id: string }>(await herald(['org', 'create', '--name', 'Acme'], env)).id;
  json(await herald(['org', 'add-member', '--org', ids.org, '--user', ids.ada], env));
  ids.x = json<{ id: string }>(await herald(['account', 'connect', '--platform', 'x', '--username', 'ada', '--user', ids.ada], env)).id;
  ids.linkedin = json<{ id: string }>(await herald(['account', 'connect', '--platform', 'linkedin', '--username', 'acme', '--org', ids.org], env)).id;
  ids.bobX = json<{ id: string }>(await herald(['account', 'connect', '--platform', 'x', '--username', 'bob', '--user', ids.bob], env)).id;
  ids.adaKey = json<{ key: string }>(await herald(['key', 'create', '--user', ids.ada], env)).key;
  ids.bobKey = json<{ key: string }>(await herald(['key', 'create', '--user', ids.bob], env)).key;
  const photo = join(dataDir, 'photo.jpg');
  await writeFile(photo, files.jpeg1080x1350);
  ids.photo = json<{ id: string }>(await herald(['media', 'add', '--user', ids.ada, '--file', photo], env)).id;
  service = await heraldServe(env);
  baseUrl = service.url;
  resetExercised();
}, 240_000);

afterAll(async () => {
  await service?.stop();
  await database?.close();
  files?.cleanup();
  await new Promise((resolve) => receiver?.close(resolve));
  await x?.close();
  await removeDataDir(dataDir);
});

describe('the running service honours its contract', { timeout: 120_000 }, () => {
  it('answers every operation as the spec says', async () => {
    const key = ids.adaKey ?? '';
    const call = <T = unknown>(method: string, path: string, init: Parameters<typeof fetchChecked>[3] = {}) =>
      fetchChecked<T>(baseUrl, method, path, { key, ...init });

    const accounts = await call<Schemas['AccountList']>('GET', '/api/v1/accounts');
    expect(accounts.body.data.map((a) => a.id)).toEqual([ids.x, ids.linkedin]);
    expect((await call<Schemas['PlatformList']>('GET', '/api/v1/platforms')).body.data).toHaveLength(11);

    const form = new FormData();
    form.append('file', new Blob([files.png64]), 'square.png');
    const uploaded = await call<Schemas['Media']>('POST', '/api/v1/media', { form });
    expect(uploaded.status).toBe(201);
    const media = await call<Schemas['MediaList']>('GET', '/api/v1/media');
    expect(media.body.data.map((m) => m.id)).toEqual([uploaded.body.id, ids.photo]);

    const draft = await call<Schemas['PostCreateResult']>('POST', '/api/v1/posts', {
      json: { accountIds: [ids.x, ids.linkedin], caption: 'Contract', mediaIds: [ids.photo] },
    });
    expect(draft.body.status).toBe('draft');
    const scheduled = await call<Schemas['PostCreateResult']>('POST', '/api/v1/posts', {
      json: { accountIds: [ids.x], caption: 'Later', mediaIds: [uploaded.body.id], scheduledAt: '2099-01-01T00:00:00Z' },
    });
    expect(scheduled.body.status).toBe('scheduled');
    expect((await call('POST', '/api/v1/posts', { json: { accountIds: [ids.x], scheduleAt: '2099-01-01T00:00:00Z' } })).status).toBe(400);
    expect((await call('POST', '/api/v1/posts', { json: { accountIds: [ids.x], caption: 'a'.repeat(281) } })).status).toBe(400);
    expect((await call('POST', '/api/v1/posts', { json: { accountIds: [ids.bobX], caption: 'hi' } })).status).toBe(403);
    expect((await call('POST', '/api/v1/posts', { body: 'caption=hi', headers: { 'content-type': 'text/plain' } })).status).toBe(415);

    const checked = await call<Schemas['PostValidation']>('POST', '/api/v1/posts/validate', { json: { accountIds: [ids.x], caption: 'a'.repeat(281) } });
    expect(checked.body).toMatchObject({ valid: false, targets: [{ lengths: [{ unit: 'weighted', count: 281, max: 280 }] }] });

    const posts = await call<Schemas['PostList']>('GET', '/api/v1/posts?limit=10');
    expect(posts.body.data.map((p) => p.id)).toEqual([scheduled.body.id, draft.body.id]);
    expect((await call('GET', '/api/v1/posts?limit=1000')).status).toBe(400);
    expect((await fetchChecked(baseUrl, 'GET', '/api/v1/posts', { key: ids.bobKey })).body).toEqual({ data: [], limit: 25, offset: 0, nextCursor: null });

    expect((await call('DELETE', `/api/v1/media/${uploaded.body.id}`)).status).toBe(400);
    expect((await call('DELETE', `/api/v1/posts/${draft.body.id}`)).status).toBe(200);
    expect((await fetchChecked(baseUrl, 'DELETE', `/api/v1/posts/${scheduled.body.id}`, { key: ids.bobKey })).status).toBe(404);
    expect((await call('DELETE', `/api/v1/posts/${scheduled.body.id}`)).status).toBe(200);
    expect((await call('DELETE', `/api/v1/media/${uploaded.body.id}`)).status).toBe(200);
    expect((await call('DELETE', `/api/v1/media/${uploaded.body.id}`)).status).toBe(404);

    // The publishing road, with the worker `herald serve` runs in its own process.
    const sandbox = await call<Schemas['Account']>('POST', '/api/v1/accounts', { json: { platform: 'mastodon', username: 'ada' } });
    expect(sandbox.body).toMatchObject({ mode: 'sandbox', health: 'ok' });
    const post = await call<Schemas['PostCreateResult']>('POST', '/api/v1/posts', { json: { accountIds: [ids.x, sandbox.body.id], caption: 'Road' } });
    const edited = await call<Schemas['PostDetail']>('PATCH', `/api/v1/posts/${post.body.id}`, {
      json: { caption: 'Road test', scheduledAt: '2099-01-01T00:00:00Z' },
    });
    expect(edited.body).toMatchObject({ status: 'scheduled', caption: 'Road test' });
    expect((await call<Schemas['PostDetail']>('POST', `/api/v1/posts/${post.body.id}/publish`)).status).toBe(202);
    const published = await waitFor(
      () => call<Schemas['PostDetail']>('GET', `/api/v1/posts/${post.body.id}`),
      (res) => res.body.status === 'published',
    );
    expect(published.body.targets.map((t) => [t.status, t.url?.startsWith('https://sandbox.herald.invalid/') ?? false])).toEqual([
      ['published', true],
      ['published', true],
    ]);
    expect((await call<Schemas['PostList']>('GET', '/api/v1/posts?status=published')).body.data.map((p) => p.id)).toEqual([post.body.id]);
    expect((await call('POST', `/api/v1/posts/${post.body.id}/retry`)).status).toBe(400);
    expect((await call('GET', `/api/v1/posts/${post.body.id}`, { key: ids.bobKey })).status).toBe(404);
    expect((await call('DELETE', `/api/v1/accounts/${sandbox.body.id}`)).status).toBe(200);

    // Webhook endpoints, after the road so that its events find none.
    const hook = await call<Schemas['WebhookWithSecret']>('POST', '/api/v1/webhooks', { json: { url: receiverUrl, eventTypes: ['post.published'] } });
    expect(hook.status).toBe(201);
    expect((await call('POST', '/api/v1/webhooks', { json: { url: 'ftp://example.com/herald', eventTypes: ['ping'] } })).status).toBe(400);
    expect((await call<Schemas['WebhookList']>('GET', '/api/v1/webhooks')).body.data.map((w) => w.id)).toEqual([hook.body.id]);
    expect((await call<Schemas['Webhook']>('PATCH', `/api/v1/webhooks/${hook.body.id}`, { json: { description: 'Contract' } })).body.description).toBe(
      'Contract',
    );
    const rotated = await call<Schemas['WebhookWithSecret']>('POST', `/api/v1/webhooks/${hook.body.id}/rotate-secret?overlapSeconds=60`);
    expect(rotated.body.secret).not.toBe(hook.body.secret);
    expect((await call('POST', `/api/v1/webhooks/${hook.body.id}/test`)).status).toBe(202);
    expect((await call('GET', `/api/v1/webhooks/${hook.body.id}/deliveries`)).status).toBe(200);
    expect((await call('GET', `/api/v1/webhooks/${hook.body.id}`, { key: ids.bobKey })).status).toBe(404);
    expect((await call('DELETE', `/api/v1/webhooks/${hook.body.id}`)).status).toBe(200);
    expect((await call('GET', `/api/v1/webhooks/${hook.body.id}`)).status).toBe(404);

    expect((await fetchChecked(baseUrl, 'GET', '/api/v1/accounts')).status).toBe(401);
    expect((await fetchChecked(baseUrl, 'GET', '/api/v1/accounts', { key: 'hrld_unknown' })).status).toBe(401);
    expect((await fetchChecked(baseUrl, 'GET', '/openapi.json')).body).toEqual(parse(readFileSync(SPEC_PATH, 'utf8')));
    expect((await fetchChecked(baseUrl, 'GET', '/openapi.yaml')).status).toBe(200);
    expect((await fetchChecked(baseUrl, 'GET', '/robots.txt')).body).toBe('User-agent: *\nAllow: /media/\nDisallow: /\n');
    // The page `npm run build` made beside the binary (this run's setup built both).
    expect((await fetchChecked(baseUrl, 'GET', '/docs')).status).toBe(200);
    // The root, where a person first looks, points to that page rather than answering 404.
    const root = await fetchChecked(baseUrl, 'GET', '/');
    expect([root.status, root.headers.location]).toEqual([302, '/docs']);
    // A platform pulling the photo by the signed URL a publisher would give it.
    const signer = createUrlSigner(Buffer.from(env.HERALD_SECRET_KEY ?? '', 'base64'));
    const photoUrl = new URL(publicMediaUrl({ baseUrl, signer }, ids.photo ?? '', new Date(Date.now() + 3_600_000)));
    const photo = await fetchChecked(baseUrl, 'GET', `${photoUrl.pathname}${photoUrl.search}`);
    expect([photo.status, photo.headers['content-type'], Number(photo.headers['content-length'])]).toEqual([200, 'image/jpeg', files.jpeg1080x1350.length]);
    expect((await fetchChecked(baseUrl, 'GET', `${photoUrl.pathname}?expires=1&signature=x`)).status).toBe(404);
    // An X account, through X's consent page and back to the client's page.
    x.consentAs(x.addUser({ username: 'ada_on_x' }));
    const started = await call<Schemas['Connection']>('POST', '/api/v1/connections', { json: { platform: 'x', returnUrl: 'https://app.example.com/done' } });
    expect(started.status).toBe(201);
    const link = await fetchChecked(baseUrl, 'GET', new URL(started.body.authorizationUrl ?? '').pathname);
    expect(link.status).toBe(302);
    const atX = await fetch(link.headers.location ?? '', { redirect: 'manual', signal: AbortSignal.timeout(10_000) });
    const back = new URL(atX.headers.get('location') ?? '');
    const cookie = (link.headers['set-cookie'] ?? '').split(';')[0] ?? '';
    const returned = await fetchChecked(baseUrl, 'GET', `${back.pathname}${back.search}`, { headers: { cookie } });
    expect([returned.status, returned.headers.location]).toEqual([302, `https://app.example.com/done?connection=${started.body.id}&status=connected`]);
    expect((await call<Schemas['Connection']>('GET', `/api/v1/connections/${started.body.id}`)).body).toMatchObject({ status: 'connected', error: null });
    expect((await fetchChecked(baseUrl, 'GET', '/api/v1/nothing-here')).status).toBe(404);
    expect((await fetchChecked(baseUrl, 'GET', '/health/live')).body).toEqual({ status: 'ok' });
    expect((await fetchChecked(baseUrl, 'GET', '/health/ready')).body).toEqual({ ready: true, database: 'up', migrations: 'applied' });

    const spec = parse(readFileSync(SPEC_PATH, 'utf8')) as { paths: Record<string, Record<string, { operationId: string }>> };
    const all = Object.values(spec.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    expect([...operationsExercised()].sort()).toEqual(all.sort());
  });

  it('stops cleanly on SIGTERM', async () => {
    expect(await service?.stop()).toBe(0);
  });
});

/** Polls until the answer satisfies `done`, for at most 20 s (the worker polls its queue twice a second). */
async function waitFor<T>(ask: () => Promise<T>, done: (answer: T) => boolean): Promise<T> {
  const until = Date.now() + 20_000;
  for (;;) {
    const answer = await ask();
    if (done(answer) || Date.now() > until) return answer;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
