import type { Readable } from 'node:stream';

/** An upload received into local staging, not yet stored: probe it, then commit or discard it. */
export interface StagedFile {
  /** A local path to read the bytes from (for probing). */
  readonly path: string;
  readonly bytes: number;
  /** The SHA-256 of the bytes (hex), taken as they were staged: what an upload is known by. */
  readonly sha256: string;
  discard(): Promise<void>;
}

/**
 * Where media files live. Uploads are staged locally first (they must be probed from disk), then
 * committed under a key the service generates. The local folder is the default; an S3-compatible
 * backend implements the same three calls (commit uploads the staged file and removes it).
 */
export interface MediaStorage {
  /** Streams the upload into staging; rejects (leaving nothing behind) if the stream fails. */
  stage(source: Readable): Promise<StagedFile>;
  /** Moves a staged file to its permanent key. */
  commit(staged: StagedFile, key: string): Promise<void>;
  /** Removes a stored file; a missing one is not an error. */
  remove(key: string): Promise<void>;
  /**
   * Reads a stored file, or the bytes `start` to `end` (inclusive) of it, as a stream: never the
   * whole file in memory (uploads may be 512 MiB). Rejects when it is missing.
   */
  open(key: string, range?: ByteRange): Promise<Readable>;
  /**
   * Reads a stored file as `open` does, for whoever holds a public media URL: on connections to the
   * store of its own, bounded, so that readers who stop reading cannot take those uploads and
   * publishing need.
   */
  openPublic(key: string, range?: ByteRange): Promise<Readable>;
  /** Removes staged files last written before `cutoff` (uploads a crash cut short); how many. */
  removeStagedBefore(cutoff: Date): Promise<number>;
  /**
   * The stored files in key order, from the first after `after` (from the start when undefined),
   * a page at a time: to find files no medium names.
   */
  storedAfter(after: string | undefined): AsyncIterable<StoredFile[]>;
}

/** A stored file: its key, and when it was last written. */
export interface StoredFile {
  key: string;
  writtenAt: Date;
}

/** Inclusive byte offsets, as an HTTP Range names them. */
export interface ByteRange {
  start: number;
  end: number;
}

/** Keys are made by the service from its own ids: `<userId>/<mediaId>`. Anything else is refused. */
export function isValidStorageKey(key: string): boolean {
  return /^[a-z]+_[0-9a-z]+\/[a-z]+_[0-9a-z]+$/.test(key);
}
