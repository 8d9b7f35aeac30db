import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUrlSigner } from '../../src/adapters/secrets/url-signer.js';
import { publicMediaUrl } from '../../src/domain/media/public-media.js';
import type { Schemas } from '../support/api.js';
import { herald, heraldConnectBluesky, heraldServe, heraldSpawn, json, type ServeProcess } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { makeDataDir, removeDataDir } from '../support/data-dir.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { fetchChecked } from '../support/fetch-checked.js';
import { canMakeNetworkNamespaces, startMachine, type Machine } from '../support/netns.js';
import { startTestPds, type TestPds } from '../support/pds.js';
import { solidPng } from '../support/png.js';
import { startS3Fake, type S3Fake } from '../support/s3-fake.js';
import { until } from '../support/wait.js';

/**
 * Two machines' worth of Herald: two `herald serve` API processes and two `herald worker`
 * processes, each with a data folder of its own, sharing nothing but PostgreSQL, Redis and the
 * object store. Each runs in a network namespace of its own (netns.ts), whose 127.0.0.1 reaches
 * only those and Bluesky, and both APIs listen on the same port of their own; where this machine
 * cannot make namespaces (not root), separate ports on 127.0.0.1 stand for them. Runs with
 * TEST_REDIS_URL.
 */
const REDIS_URL = process.env.TEST_REDIS_URL ?? '';
const RATE_LIMIT = 40;
const secretKey = randomBytes(32);
const SEPARATE_NETWORKS = canMakeNetworkNamespaces();
/** The port both APIs listen on, each in its own namespace. */
const API_PORT = 8080;

let database: TestDatabase;
let store: S3Fake;
let pds: TestPds;
let proxy: FaultProxy;
const dataDirs: string[] = [];
const apis: ServeProcess[] = [];
const workers: ChildProcess[] = [];
const machines: Machine[] = [];

/** The ports of this namespace a machine reaches: the database, Redis, the store and Bluesky (through the fault proxy). */
function sharedPorts(): number[] {
  return [database.url, REDIS_URL, store.env().AWS_ENDPOINT_URL_S3 ?? '', proxy.url].map((url) => Number(new URL(url).port));
}

/** One machine: a network namespace of its own (when this machine can make one), and the environment of its Herald, with its own data folder and the shared database, Redis, store and secret key. */
async function machine(name: string, serves: boolean): Promise<{ env: Record<string, string>; on: Machine | undefined }> {
  const on = SEPARATE_NETWORKS ? await startMachine({ reach: sharedPorts(), serve: serves ? [API_PORT] : [] }) : undefined;
  if (on !== undefined) machines.push(on);
  return { env: await environment(name), on };
}

async function environment(name: string): Promise<Record<string, string>> {
  const dataDir = await makeDataDir(`herald-${name}-`);
  dataDirs.push(dataDir);
  return {
    HERALD_DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    REDIS_URL,
    HERALD_SECRET_KEY: secretKey.toString('base64'),
    HERALD_MEDIA_URL: `s3://${store.bucket}/media`,
    ...store.env(),
    HERALD_ALLOW_PRIVATE_NETWORK: 'true',
    HERALD_PUBLISH_LEASE_SECONDS: '2',
    HERALD_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
    HERALD_RATE_LIMIT_WRITES_PER_MINUTE: String(RATE_LIMIT),
    // The API processes publish nothing: the workers do.
    HERALD_WORKER: 'false',
    LOG_LEVEL: 'silent',
  };
}

function stopWorker(worker: ChildProcess): Promise<unknown> {
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  worker.kill('SIGTERM');
  return exited;
}

beforeAll(async () => {
  [database, store, pds] = await Promise.all([createTestDatabase(), startS3Fake(), startTestPds()]);
  proxy = await startFaultProxy(pds.url);
}, 120_000);
afterAll(async () => {
  for (const worker of workers) if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
  await Promise.all(apis.map((api) => api.stop()));
  await Promise.all(machines.map((m) => m.close()));
  await proxy?.close();
  await Promise.all([pds?.close(), store?.close(), database?.close()]);
  await Promise.all(dataDirs.map((dir) => removeDataDir(dir)));
});

describe(`two API processes and two workers on separate data folders${SEPARATE_NETWORKS ? ' and network namespaces' : ' (separate ports: this machine cannot make network namespaces)'}`, () => {
  it('share media, rate limits, key revocation and publishing, exactly once across a killed worker', async () => {
    const [machineA, machineB, machine1, machine2] = await Promise.all([
      machine('api-a', true),
      machine('api-b', true),
      machine('worker-1', false),
      machine('worker-2', false),
    ]);
    const [envA, envB, envWorker1, envWorker2] = [machineA.env, machineB.env, machine1.env, machine2.env];
    const elsewhere = (on: Machine | undefined) => (on === undefined ? undefined : { port: API_PORT, command: on.command, urlOf: on.urlOf });
    // Operators' commands run here, beside the database.
    json(await herald(['db', 'migrate'], envA));
    const user = json<{ id: string }>(await herald(['user', 'create', '--name', 'Ada'], envA)).id;
    const { key } = json<{ key: string }>(await herald(['key', 'create', '--user', user], envA));
    const alice = await pds.createAccount('alice');
    const account = await heraldConnectBluesky(envA, proxy.url, alice, user);
    // With namespaces both listen on port 8080, each on its own 127.0.0.1: in one namespace the second could not.
    const [a, b] = await Promise.all([heraldServe(envA, elsewhere(machineA.on)), heraldServe(envB, elsewhere(machineB.on))]);
    apis.push(a, b);

    // A file uploaded through A lives in the store, not in A's data folder, and both serve it.
    const png = solidPng(16, 16, [0, 128, 255]);
    const form = new FormData();
    form.append('file', new Blob([png], { type: 'image/png' }), 'blue.png');
    form.append('altText', 'Blue');
    const uploaded = await fetchChecked<Schemas['Media']>(a.url, 'POST', '/api/v1/media', { key, form });
    expect(uploaded.status).toBe(201);
    const mediaId = uploaded.body.id;
    expect((await store.object(`media/${user}/${mediaId}`))?.bytes).toEqual(png);
    const signedPath = new URL(publicMediaUrl({ baseUrl: 'http://unused', signer: createUrlSigner(secretKey) }, mediaId, new Date(Date.now() + 600_000)));
    for (const api of [a, b]) {
      const served = await fetch(`${api.url}${signedPath.pathname}${signedPath.search}`);
      expect(served.status).toBe(200);
      expect(Buffer.from(await served.arrayBuffer())).toEqual(png);
    }

    // The post is made through B; worker 1 takes it and dies after Bluesky committed the record.
    const created = await fetchChecked<{ id: string }>(b.url, 'POST', '/api/v1/posts', {
      key,
      json: { accountIds: [account.id], caption: 'Across machines, once', mediaIds: [mediaId] },
    });
    expect(created.status).toBe(201);
    expect((await fetchChecked(b.url, 'POST', `/api/v1/posts/${created.body.id}/publish`, { key })).status).toBe(202);
    proxy.plan((req) => (req.path.endsWith('repo.putRecord') ? { kind: 'commitThenHang' } : undefined));
    const doomed = heraldSpawn(['worker'], envWorker1, 'ignore', machine1.on);
    workers.push(doomed);
    const died = new Promise((resolve) => doomed.once('exit', resolve));
    await until('Bluesky to commit the record', () => proxy.requests.some((r) => r.path.endsWith('repo.putRecord')), { timeoutMs: 60_000 });
    doomed.kill('SIGKILL');
    await died;
    proxy.plan(() => undefined);

    // Worker 2, on its own data folder, reads the file from the store and completes the same call.
    const survivor = heraldSpawn(['worker'], envWorker2, 'ignore', machine2.on);
    workers.push(survivor);
    let detail: Schemas['PostDetail'] | undefined;
    await until(
      'the post to be published',
      async () => {
        detail = (await fetchChecked<Schemas['PostDetail']>(a.url, 'GET', `/api/v1/posts/${created.body.id}`, { key })).body;
        return detail.status === 'published';
      },
      { timeoutMs: 60_000, everyMs: 250 },
    );
    await stopWorker(survivor);
    const records = await pds.listRecords(alice.did);
    expect(records).toHaveLength(1);
    expect(detail?.targets[0]).toMatchObject({ status: 'published', platformPostId: records[0]?.uri, error: null });
    const embed = (records[0]?.value as { embed: { images: { alt: string; image: { ref: { $link: string } } }[] } }).embed;
    expect(embed.images.map((image) => image.alt)).toEqual(['Blue']);
    expect(await pds.getBlob(alice.did, embed.images[0]?.image.ref.$link ?? '')).toEqual(png);

    // Rate limits are counted in Redis: a fresh key gets the limit across both APIs, not twice it.
    const counted = json<{ key: string }>(await herald(['key', 'create', '--user', user], envA)).key;
    const statuses: number[] = [];
    for (let i = 0; i <= RATE_LIMIT; i++) statuses.push((await fetchChecked((i % 2 === 0 ? a : b).url, 'GET', '/api/v1/accounts', { key: counted })).status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(RATE_LIMIT);
    expect(statuses.at(-1)).toBe(429);

    // A key revoked through one process is refused by both at once.
    const revocable = json<{ id: string; key: string }>(await herald(['key', 'create', '--user', user], envA));
    expect((await fetchChecked(b.url, 'GET', '/api/v1/accounts', { key: revocable.key })).status).toBe(200);
    expect((await fetchChecked(a.url, 'GET', '/api/v1/accounts', { key: revocable.key })).status).toBe(200);
    json(await herald(['key', 'revoke', '--id', revocable.id], envWorker1));
    for (const api of [a, b]) expect((await fetchChecked(api.url, 'GET', '/api/v1/accounts', { key: revocable.key })).status).toBe(401);
  }, 240_000);
});
