import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import { selectMediaById } from '../../db/queries/media.js';
import type { Database } from '../../db/schema.js';
import type { UrlSigner } from '../ports/secrets.js';
import type { ByteRange, MediaStorage } from '../ports/media-storage.js';
import { DomainError } from '../errors.js';
import { isWellFormedId } from '../ids.js';

/** What makes and checks public media URLs: where Herald is reached from outside, and the signer. */
export interface PublicMediaUrls {
  /** HERALD_PUBLIC_URL: scheme, host and port (and path prefix) platforms reach this service at. */
  baseUrl: string;
  signer: UrlSigner;
  /** How long an answer may make no progress (its reader not reading) before it is cut. */
  stallMs: number;
}

/** A reader that takes nothing for 30 s is cut: a platform fetching media reads on. */
export const PUBLIC_MEDIA_STALL_MS = 30_000;

export const MEDIA_NOT_FOUND = 'Media not found';

/**
 * A URL from which anyone holding it can read one media file until `expiresAt` (whole seconds):
 * what a platform that pulls media (Instagram, Threads, TikTok photos, Pinterest) is given. The
 * signature covers the id and the expiry, so neither can be changed.
 */
export function publicMediaUrl(urls: Pick<PublicMediaUrls, 'baseUrl' | 'signer'>, mediaId: string, expiresAt: Date): string {
  const expires = Math.floor(expiresAt.getTime() / 1000);
  const signature = urls.signer.sign(`${mediaId}.${expires}`);
  return `${urls.baseUrl.replace(/\/+$/, '')}/media/${mediaId}?expires=${expires}&signature=${signature}`;
}

export interface PublicMediaFile {
  mime: string;
  bytes: number;
  open(range?: ByteRange): Promise<Readable>;
}

/**
 * The file a public media URL names, when its signature holds and it has not expired; anything
 * else (a bad or expired signature, an unknown or deleted medium) is the same `Media not found`,
 * so a URL tells nothing about media it does not name.
 */
export async function openPublicMedia(
  db: Kysely<Database>,
  storage: MediaStorage,
  urls: PublicMediaUrls,
  request: { id: string; expires: number; signature: string; now: Date },
): Promise<PublicMediaFile> {
  const { id, expires, signature, now } = request;
  const valid = isWellFormedId('med', id) && expires * 1000 > now.getTime() && urls.signer.verify(`${id}.${expires}`, signature);
  const row = valid ? await selectMediaById(db, id) : undefined;
  const key = row?.storage_key;
  if (row === undefined || key === null || key === undefined) throw new DomainError('not_found', MEDIA_NOT_FOUND);
  return { mime: row.mime, bytes: Number(row.bytes), open: (range) => storage.openPublic(key, range) };
}
