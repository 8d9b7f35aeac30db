import { invalidRequest } from '../errors.js';
import { isWellFormedId } from '../ids.js';

/** Where a page of posts ends: the last post's id, and its creation time to the millisecond. */
export interface PostCursor {
  id: string;
  createdAt: Date;
}

const VERSION = 'p1';

/**
 * Opaque to clients (base64url), so its form can change. The id finds the exact position (the
 * database keeps microseconds, a Date does not); the time stands in when that post is gone.
 */
export function encodePostCursor(cursor: PostCursor): string {
  return Buffer.from(`${VERSION}.${cursor.id}.${cursor.createdAt.getTime()}`).toString('base64url');
}

export const INVALID_CURSOR = 'cursor is not one this API returned';

/** The cursor a client sent back; anything else is a 400 naming the parameter. */
export function decodePostCursor(text: string): PostCursor {
  const decoded = Buffer.from(text, 'base64url').toString('utf8');
  const [version, id, ms, ...rest] = decoded.split('.');
  const createdAt = new Date(Number(ms));
  // The decoder skips what is not base64url; only the exact text this API made is taken.
  const canonical = Buffer.from(decoded).toString('base64url') === text;
  if (
    !canonical ||
    version !== VERSION ||
    id === undefined ||
    !isWellFormedId('post', id) ||
    !/^\d{1,15}$/.test(ms ?? '') ||
    rest.length > 0 ||
    Number.isNaN(createdAt.getTime())
  ) {
    throw invalidRequest([
      { code: 'invalid_string', expected: 'a nextCursor from an earlier page', received: text, path: ['cursor'], message: INVALID_CURSOR },
    ]);
  }
  return { id, createdAt };
}
