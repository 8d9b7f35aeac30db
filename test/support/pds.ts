import { createHmac, generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Database as PlcDatabase, PlcServer } from '@did-plc/server';
import { PDS, envToCfg, envToSecrets, type ServerEnvironment } from '@atproto/pds';
import { unusedPort } from './ports.js';

/** A record as com.atproto.repo.getRecord / listRecords answer it. */
export interface PdsRecord {
  uri: string;
  cid: string;
  value: Record<string, unknown>;
}

export interface TestAccount {
  did: string;
  handle: string;
  /** The account password (what an app password is not): for operations a test drives itself. */
  password: string;
  appPassword: string;
}

export interface TestPds {
  /** The PDS as a client reaches it: http://127.0.0.1:<port>. */
  url: string;
  /** Creates `<name>.test` and an app password for it. */
  createAccount(name: string): Promise<TestAccount>;
  /** Every app.bsky.feed.post record of the repo. */
  listRecords(did: string): Promise<PdsRecord[]>;
  /** The post at that rkey, or null when there is none. */
  getRecord(did: string, rkey: string): Promise<PdsRecord | null>;
  getBlob(did: string, cid: string): Promise<Buffer>;
  /** Ends a session as a logout does: its refresh token is revoked. */
  revokeSession(refreshJwt: string): Promise<void>;
  /** A correctly signed access token for the account whose expiry is already past. */
  expiredAccessJwt(did: string): string;
  close(): Promise<void>;
}

const COLLECTION = 'app.bsky.feed.post';

/**
 * A real PDS (0.4.217) and an in-memory PLC directory, in this process, on 127.0.0.1. Rate limits
 * are off unless asked for, as in the reference PDS.
 */
export async function startTestPds(options: { rateLimits?: boolean } = {}): Promise<TestPds> {
  const plc = PlcServer.create({ db: PlcDatabase.mock(), port: 0 });
  const plcServer = await plc.start();
  const plcUrl = `http://127.0.0.1:${(plcServer.address() as AddressInfo).port}`;

  const dataDirectory = await mkdtemp(join(tmpdir(), 'herald-pds-'));
  // The PDS binds the port it is configured with (it has no "any port"), so one is picked first.
  const port = await unusedPort();
  const jwtSecret = randomBytes(16).toString('hex');
  const env: ServerEnvironment = {
    devMode: true,
    port,
    hostname: 'localhost',
    dataDirectory,
    blobstoreDiskLocation: join(dataDirectory, 'blobs'),
    didPlcUrl: plcUrl,
    plcRotationKeyK256PrivateKeyHex: secp256k1PrivateKeyHex(),
    jwtSecret,
    adminPassword: randomBytes(16).toString('hex'),
    serviceHandleDomains: ['.test'],
    inviteRequired: false,
    disableSsrfProtection: true,
    rateLimitsEnabled: options.rateLimits ?? false,
    bskyAppViewUrl: 'https://appview.invalid',
    bskyAppViewDid: 'did:example:appview',
    bskyAppViewCdnUrlPattern: 'https://cdn.appview.invalid/%s/%s/%s',
    modServiceUrl: 'https://moderation.invalid',
    modServiceDid: 'did:example:moderation',
  };
  let pds: PDS;
  try {
    pds = await PDS.create(envToCfg(env), envToSecrets(env));
    await pds.start();
  } catch (error) {
    await plc.destroy();
    await rm(dataDirectory, { recursive: true, force: true });
    throw error;
  }
  const url = `http://127.0.0.1:${port}`;
  const serviceDid = pds.ctx.cfg.service.did;

  const xrpc = async <T>(method: string, init: { query?: Record<string, string>; body?: unknown; token?: string } = {}): Promise<T> => {
    const target = new URL(`/xrpc/${method}`, url);
    for (const [k, v] of Object.entries(init.query ?? {})) target.searchParams.set(k, v);
    const response = await fetch(target, {
      method: init.body === undefined ? 'GET' : 'POST',
      headers: {
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(init.token === undefined ? {} : { authorization: `Bearer ${init.token}` }),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: AbortSignal.timeout(15_000),
    });
    if (!response.ok) throw new XrpcTestError(method, response.status, await response.text());
    return (await response.json()) as T;
  };

  return {
    url,
    async createAccount(name) {
      const handle = `${name}.test`;
      const password = randomBytes(12).toString('hex');
      const account = await xrpc<{ did: string; accessJwt: string }>('com.atproto.server.createAccount', {
        body: { handle, email: `${name}@example.test`, password },
      });
      const app = await xrpc<{ password: string }>('com.atproto.server.createAppPassword', {
        body: { name: 'herald' },
        token: account.accessJwt,
      });
      return { did: account.did, handle, password, appPassword: app.password };
    },
    async listRecords(did) {
      const records: PdsRecord[] = [];
      let cursor: string | undefined;
      do {
        const page = await xrpc<{ records: PdsRecord[]; cursor?: string }>('com.atproto.repo.listRecords', {
          query: { repo: did, collection: COLLECTION, limit: '100', ...(cursor === undefined ? {} : { cursor }) },
        });
        records.push(...page.records);
        cursor = page.records.length === 0 ? undefined : page.cursor;
      } while (cursor !== undefined);
      return records;
    },
    async getRecord(did, rkey) {
      try {
        return await xrpc<PdsRecord>('com.atproto.repo.getRecord', { query: { repo: did, collection: COLLECTION, rkey } });
      } catch (error) {
        if (error instanceof XrpcTestError && error.body.includes('RecordNotFound')) return null;
        throw error;
      }
    },
    async getBlob(did, cid) {
      const response = await fetch(`${url}/xrpc/com.atproto.sync.getBlob?did=${encodeURIComponent(did)}&cid=${encodeURIComponent(cid)}`, {
        signal: AbortSignal.timeout(15_000),
      });
      if (!response.ok) throw new XrpcTestError('com.atproto.sync.getBlob', response.status, await response.text());
      return Buffer.from(await response.arrayBuffer());
    },
    async revokeSession(refreshJwt) {
      const response = await fetch(`${url}/xrpc/com.atproto.server.deleteSession`, {
        method: 'POST',
        headers: { authorization: `Bearer ${refreshJwt}` },
        signal: AbortSignal.timeout(15_000),
      });
      if (!response.ok) throw new XrpcTestError('com.atproto.server.deleteSession', response.status, await response.text());
    },
    expiredAccessJwt(did) {
      // Signed as the PDS signs access tokens (HS256 with its JWT secret), so only the expiry is wrong.
      const now = Math.floor(Date.now() / 1000);
      const part = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');
      const unsigned = `${part({ typ: 'at+jwt', alg: 'HS256' })}.${part({ scope: 'com.atproto.access', aud: serviceDid, sub: did, iat: now - 7200, exp: now - 60 })}`;
      return `${unsigned}.${createHmac('sha256', jwtSecret).update(unsigned).digest('base64url')}`;
    },
    async close() {
      await pds.destroy();
      await plc.destroy();
      await rm(dataDirectory, { recursive: true, force: true });
    },
  };
}

class XrpcTestError extends Error {
  constructor(
    method: string,
    readonly status: number,
    readonly body: string,
  ) {
    super(`${method} answered ${status}: ${body}`);
  }
}

/** A fresh secp256k1 private key as the PDS wants its PLC rotation key: 32 bytes in hex. */
function secp256k1PrivateKeyHex(): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
  const jwk = privateKey.export({ format: 'jwk' });
  if (jwk.d === undefined) throw new Error('no private scalar');
  return Buffer.from(jwk.d, 'base64url').toString('hex');
}
