import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { access, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { isValidStorageKey, type ByteRange, type MediaStorage, type StagedFile, type StoredFile } from '../../domain/ports/media-storage.js';

/**
 * Media files in a local folder: `<root>/files/<userId>/<mediaId>`, staging in `<root>/staging`.
 * Paths are built only from service-generated keys, never from names a client sends.
 */
export class LocalDiskStorage implements MediaStorage {
  readonly #files: string;
  readonly #staging: string;

  constructor(root: string) {
    this.#files = join(root, 'files');
    this.#staging = join(root, 'staging');
  }

  async stage(source: Readable): Promise<StagedFile> {
    await mkdir(this.#staging, { recursive: true });
    const path = join(this.#staging, randomUUID());
    const hash = createHash('sha256');
    try {
      await pipeline(
        source,
        async function* (chunks: AsyncIterable<Buffer>) {
          for await (const chunk of chunks) {
            hash.update(chunk);
            yield chunk;
          }
        },
        createWriteStream(path, { flags: 'wx' }),
      );
    } catch (err) {
      await rm(path, { force: true });
      throw err;
    }
    const { size } = await stat(path);
    return { path, bytes: size, sha256: hash.digest('hex'), discard: () => rm(path, { force: true }) };
  }

  async commit(staged: StagedFile, key: string): Promise<void> {
    const target = this.pathOf(key);
    await mkdir(dirname(target), { recursive: true });
    await rename(staged.path, target);
  }

  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async open(key: string, range?: ByteRange): Promise<Readable> {
    const path = this.pathOf(key);
    // A missing file rejects here, not later as a stream error in the middle of an upload.
    await access(path);
    return createReadStream(path, range);
  }

  /** A file descriptor per reader: no pool to share, so the same as `open`. */
  openPublic(key: string, range?: ByteRange): Promise<Readable> {
    return this.open(key, range);
  }

  async removeStagedBefore(cutoff: Date): Promise<number> {
    let removed = 0;
    for (const name of await namesIn(this.#staging)) {
      const path = join(this.#staging, name);
      // A file gone meanwhile was an upload that has just finished.
      const stats = await stat(path).catch(ifGone(undefined));
      if (stats?.isFile() && stats.mtime < cutoff) {
        await rm(path, { force: true });
        removed += 1;
      }
    }
    return removed;
  }

  async *storedAfter(after: string | undefined): AsyncIterable<StoredFile[]> {
    let page: StoredFile[] = [];
    // Sorted as keys compare: '/' sorts before every character of an id.
    for (const user of (await namesIn(this.#files)).sort()) {
      if (after !== undefined && `${user}/` < after.slice(0, after.indexOf('/') + 1)) continue;
      for (const media of (await namesIn(join(this.#files, user))).sort()) {
        const key = `${user}/${media}`;
        if (!isValidStorageKey(key) || (after !== undefined && key <= after)) continue;
        const stats = await stat(join(this.#files, key)).catch(ifGone(undefined));
        if (stats?.isFile()) page.push({ key, writtenAt: stats.mtime });
        if (page.length === PAGE) {
          yield page;
          page = [];
        }
      }
    }
    if (page.length > 0) yield page;
  }

  /** Where a key's file is (whether or not it is there): what `herald media migrate` reads to move it elsewhere. */
  pathOf(key: string): string {
    if (!isValidStorageKey(key)) throw new Error('Invalid storage key');
    return join(this.#files, key);
  }
}

/** How many files storedAfter reads before it yields them. */
const PAGE = 500;

/** The names in a folder; none when it is not there (yet, or any more). */
async function namesIn(folder: string): Promise<string[]> {
  return readdir(folder).catch(ifGone([]));
}

/** A rejection handler that answers `value` for a file or folder that is not there, and rethrows anything else. */
function ifGone<T>(value: T): (err: NodeJS.ErrnoException) => T {
  return (err) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return value;
    throw err;
  };
}
