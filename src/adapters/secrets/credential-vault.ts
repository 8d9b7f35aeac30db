import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CredentialVault } from '../../domain/ports/secrets.js';

const VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** AES-256-GCM with a fresh IV per seal; the version and key id are authenticated with the ciphertext. */
export function createCredentialVault(key: Buffer): CredentialVault {
  if (key.length !== KEY_BYTES) throw new Error(`The secret key must be ${KEY_BYTES} bytes, got ${key.length}`);
  // A short public fingerprint of the key, so that opening with the wrong key says so plainly.
  const keyId = createHash('sha256').update(key).digest('hex').slice(0, 8);
  const header = `${VERSION}.${keyId}`;

  return {
    seal(value) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(header));
      const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
      return [header, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
    },

    open<T>(sealed: string): T {
      const parts = sealed.split('.');
      const [version, sealedKeyId, iv, tag, ciphertext] = parts;
      if (parts.length !== 5 || version !== VERSION || iv === undefined || tag === undefined || ciphertext === undefined) {
        throw new Error(`Sealed credentials are not in the ${VERSION}.<keyId>.<iv>.<tag>.<ciphertext> form`);
      }
      if (sealedKeyId !== keyId) {
        throw new Error(`Credentials were sealed with another key (key id ${sealedKeyId}); set HERALD_SECRET_KEY to the key they were sealed with`);
      }
      // authTagLength makes a shortened tag fail rather than be checked on fewer bytes.
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(header));
      let plaintext: string;
      try {
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        plaintext = Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new Error('Sealed credentials failed their integrity check: they were altered or damaged');
      }
      return JSON.parse(plaintext) as T;
    },
  };
}

const KEY_FORMS = `${KEY_BYTES} bytes as base64 (44 characters) or as hex (64 characters); make one with \`openssl rand -base64 32\``;

/** The key from its text form (base64, base64url or hex), or null when the text is none of them. */
function parseKey(text: string): Buffer | null {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) return null;
  const key = Buffer.from(trimmed, 'base64');
  // Node's decoder ignores stray trailing bits; a key must encode back to exactly what was given.
  const canonical = trimmed.replace(/=$/, '').replaceAll('+', '-').replaceAll('/', '_');
  return key.toString('base64url') === canonical ? key : null;
}

/**
 * The service's secret key: HERALD_SECRET_KEY when set, else `<dataDir>/secret.key`, created on
 * first use. Throws a message fit for start-up when the key given is not a key. The value itself
 * never appears in a message.
 */
export async function loadSecretKey(options: { secretKey: string | undefined; dataDir: string }): Promise<Buffer> {
  const { secretKey, dataDir } = options;
  if (secretKey !== undefined && secretKey.trim() !== '') {
    const key = parseKey(secretKey);
    if (key === null) throw new Error(`HERALD_SECRET_KEY must be ${KEY_FORMS}; got ${secretKey.trim().length} characters`);
    return key;
  }
  const path = join(dataDir, 'secret.key');
  return (await readKeyFile(path)) ?? (await createKeyFile(dataDir, path));
}

async function readKeyFile(path: string): Promise<Buffer | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const key = parseKey(text);
  if (key === null) {
    throw new Error(`${path} does not hold a secret key (${KEY_FORMS}); restore the key credentials were sealed with, or set HERALD_SECRET_KEY`);
  }
  return key;
}

/**
 * Writes a new key to a private temporary file, then links it into place: the link fails when
 * another process got there first, and a reader never sees a half-written key. The loser reads
 * the winner's key, so processes starting together end with one key.
 */
async function createKeyFile(dataDir: string, path: string): Promise<Buffer> {
  await mkdir(dataDir, { recursive: true });
  const key = randomBytes(KEY_BYTES);
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, `${key.toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  try {
    await link(temporary, path);
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const existing = await readKeyFile(path);
    if (existing === null) throw err;
    return existing;
  } finally {
    await unlink(temporary);
  }
}
