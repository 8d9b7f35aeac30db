import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCredentialVault, loadSecretKey } from '../../src/adapters/secrets/credential-vault.js';

const credentials = { accessJwt: 'eyJhbGciOiJFUzI1NksifQ.secret-access', refreshJwt: 'refresh-me-not', did: 'did:plc:abc' };

describe('the credential vault', () => {
  const key = randomBytes(32);
  const vault = createCredentialVault(key);

  it('opens what it sealed', () => {
    expect(vault.open(vault.seal(credentials))).toEqual(credentials);
  });

  it('seals into the compact v1 form, revealing nothing, with a fresh IV each time', () => {
    const sealed = vault.seal(credentials);
    expect(sealed).toMatch(/^v1\.[0-9a-f]{8}\.[\w-]{16}\.[\w-]{22}\.[\w-]+$/);
    for (const secret of ['secret-access', 'refresh-me-not', 'did:plc:abc', 'accessJwt']) expect(sealed).not.toContain(secret);
    expect(Buffer.from(sealed.split('.')[4] ?? '', 'base64url').toString('latin1')).not.toContain('refresh');
    expect(vault.seal(credentials)).not.toBe(sealed);
  });

  it.each([
    ['the ciphertext', 4],
    ['the tag', 3],
    ['the IV', 2],
  ])('refuses a string whose %s was altered', (_what, index) => {
    const parts = vault.seal(credentials).split('.');
    const bytes = Buffer.from(parts[index] ?? '', 'base64url');
    bytes[0] = (bytes[0] ?? 0) ^ 1;
    parts[index] = bytes.toString('base64url');
    expect(() => vault.open(parts.join('.'))).toThrow('Sealed credentials failed their integrity check: they were altered or damaged');
  });

  it('refuses a shortened tag', () => {
    const parts = vault.seal(credentials).split('.');
    parts[3] = Buffer.from(parts[3] ?? '', 'base64url')
      .subarray(0, 4)
      .toString('base64url');
    expect(() => vault.open(parts.join('.'))).toThrow(/integrity check/);
  });

  it('says plainly when the credentials were sealed with another key', () => {
    const sealed = createCredentialVault(randomBytes(32)).seal(credentials);
    const otherKeyId = sealed.split('.')[1];
    expect(() => vault.open(sealed)).toThrow(
      `Credentials were sealed with another key (key id ${otherKeyId}); set HERALD_SECRET_KEY to the key they were sealed with`,
    );
  });

  it('refuses what is not a sealed string', () => {
    expect(() => vault.open('{"accessJwt":"x"}')).toThrow('Sealed credentials are not in the v1.<keyId>.<iv>.<tag>.<ciphertext> form');
  });

  it('needs a 32-byte key', () => {
    expect(() => createCredentialVault(randomBytes(16))).toThrow('The secret key must be 32 bytes, got 16');
  });
});

describe('loadSecretKey', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'herald-vault-'));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('creates <dataDir>/secret.key, private to its owner, and reuses it on the next load', async () => {
    const first = await loadSecretKey({ secretKey: undefined, dataDir });
    const path = join(dataDir, 'secret.key');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(Buffer.from((await readFile(path, 'utf8')).trim(), 'base64')).toEqual(first);
    expect(first).toHaveLength(32);
    const second = await loadSecretKey({ secretKey: '', dataDir });
    expect(second).toEqual(first);
  });

  it('creates the data folder when it does not exist yet', async () => {
    const nested = join(dataDir, 'fresh', 'herald');
    expect(await loadSecretKey({ secretKey: undefined, dataDir: nested })).toHaveLength(32);
  });

  it('gives processes that start together one key', async () => {
    const keys = await Promise.all(Array.from({ length: 8 }, () => loadSecretKey({ secretKey: undefined, dataDir })));
    for (const key of keys) expect(key).toEqual(keys[0]);
  });

  it('refuses a key file that holds no key, without showing its content', async () => {
    await writeFile(join(dataDir, 'secret.key'), 'not-a-key');
    const load = loadSecretKey({ secretKey: undefined, dataDir });
    await expect(load).rejects.toThrow(`${join(dataDir, 'secret.key')} does not hold a secret key`);
    await expect(load).rejects.not.toThrow(/not-a-key/);
  });

  it('prefers HERALD_SECRET_KEY and touches no file then', async () => {
    const key = randomBytes(32);
    expect(await loadSecretKey({ secretKey: key.toString('base64'), dataDir })).toEqual(key);
    await expect(stat(join(dataDir, 'secret.key'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it.each([
    ['base64', (key: Buffer) => key.toString('base64')],
    ['base64 without padding', (key: Buffer) => key.toString('base64').replace(/=$/, '')],
    ['base64url', (key: Buffer) => key.toString('base64url')],
    ['hex', (key: Buffer) => key.toString('hex')],
    ['HEX', (key: Buffer) => key.toString('hex').toUpperCase()],
    ['base64 with a trailing newline', (key: Buffer) => `${key.toString('base64')}\n`],
  ])('accepts HERALD_SECRET_KEY as %s', async (_form, encode) => {
    // 0xfb 0xff bytes make base64 and base64url differ (+/ against -_).
    const key = Buffer.concat([Buffer.from([0xfb, 0xff, 0xfe]), randomBytes(29)]);
    expect(await loadSecretKey({ secretKey: encode(key), dataDir })).toEqual(key);
  });

  it.each([
    ['too short', randomBytes(16).toString('base64')],
    ['too long', randomBytes(48).toString('base64')],
    ['63 hex characters', randomBytes(32).toString('hex').slice(1)],
    ['a passphrase', 'correct horse battery staple'],
    ['base64 with stray trailing bits', `${'A'.repeat(42)}B=`],
  ])('refuses HERALD_SECRET_KEY that is %s, without echoing it', async (_what, secretKey) => {
    const load = loadSecretKey({ secretKey, dataDir });
    await expect(load).rejects.toThrow(
      /^HERALD_SECRET_KEY must be 32 bytes as base64 \(44 characters\) or as hex \(64 characters\); make one with `openssl rand -base64 32`; got \d+ characters$/,
    );
    await expect(load).rejects.not.toThrow(secretKey);
  });
});
