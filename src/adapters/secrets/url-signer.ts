import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { UrlSigner } from '../../domain/ports/secrets.js';

/**
 * HMAC-SHA256 signatures for URLs Herald hands out, with a key derived (HKDF) from the service's
 * secret key: the same key in every process that shares a database, and never the key itself.
 */
export function createUrlSigner(secretKey: Buffer): UrlSigner {
  const key = Buffer.from(hkdfSync('sha256', secretKey, Buffer.alloc(0), 'herald public media urls', 32));
  const sign = (text: string) => createHmac('sha256', key).update(text).digest('base64url');
  return {
    sign,
    verify(text, signature) {
      const expected = Buffer.from(sign(text));
      const given = Buffer.from(signature);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}
