import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, paginateListObjectsV2, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { DomainError } from '../../domain/errors.js';
import { isValidStorageKey, type ByteRange, type MediaStorage, type StagedFile, type StoredFile } from '../../domain/ports/media-storage.js';
import { LocalDiskStorage } from './local-disk-storage.js';
import type { S3Location } from './s3-location.js';

/** S3's least part is 5 MiB; 8 MiB keeps a 512 MiB upload at 64 parts. */
const PART_BYTES = 8 * 1024 * 1024;

/** Connections to the store that public media reads may hold at once (uploads and publishing have their own). */
const PUBLIC_READ_SOCKETS = 16;

export interface S3StorageOptions {
  location: S3Location;
  /** The local folder whose `staging/` receives uploads, which are probed from disk before they are committed. */
  stagingRoot: string;
  /**
   * Settings beyond the ones the SDK reads itself from the standard AWS variables (AWS_ENDPOINT_URL_S3,
   * AWS_REGION, AWS_ACCESS_KEY_ID, …): forcePathStyle, or, in tests, the endpoint and credentials.
   */
  client?: S3ClientConfig;
  /** How many connections public media reads may hold at once; PUBLIC_READ_SOCKETS unless given (tests). */
  publicReadSockets?: number;
}

/** What the store holds under a key: its size, and the SHA-256 Herald declared when it put it there (null: none declared). */
export interface StoredObject {
  bytes: number;
  sha256: string | null;
}

/**
 * Media files in a bucket of an S3-compatible store, as `<prefix>/<userId>/<mediaId>`. Uploads are
 * staged on local disk as LocalDiskStorage stages them (they are probed from a path), then streamed
 * to the bucket. A store that cannot be reached or fails is a `storage_unavailable` DomainError
 * (503): the server's fault, not the request's.
 */
export class S3Storage implements MediaStorage {
  readonly #client: S3Client;
  /** Public media reads only: its own pool of sockets, so slow readers cannot take the uploads' ones. */
  readonly #publicReads: S3Client;
  readonly #location: S3Location;
  readonly #staging: LocalDiskStorage;

  private constructor({ location, stagingRoot, client = {}, publicReadSockets = PUBLIC_READ_SOCKETS }: S3StorageOptions) {
    const config: S3ClientConfig = {
      // Newer SDKs send bodies aws-chunked with trailing checksums by default, which many self-hosted stores cannot read.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // Each attempt waits at most 3 s to connect, 30 s of silence and 4 minutes in all; three attempts: an upload is answered in bounded time.
      maxAttempts: 3,
      requestHandler: { connectionTimeout: 3_000, socketTimeout: 30_000, requestTimeout: 240_000, throwOnRequestTimeout: true },
      ...client,
    };
    this.#client = new S3Client(config);
    const pool = { keepAlive: true, maxSockets: publicReadSockets };
    this.#publicReads = new S3Client({
      ...config,
      requestHandler: {
        connectionTimeout: 3_000,
        socketTimeout: 30_000,
        requestTimeout: 240_000,
        throwOnRequestTimeout: true,
        httpAgent: pool,
        httpsAgent: pool,
      },
    });
    this.#location = location;
    this.#staging = new LocalDiskStorage(stagingRoot);
  }

  /** Refuses, at start rather than at the first upload, a configuration that names no region (the SDK cannot sign without one). */
  static async create(options: S3StorageOptions): Promise<S3Storage> {
    const storage = new S3Storage(options);
    try {
      await storage.#client.config.region();
    } catch {
      throw new Error('Media storage on S3 needs a region: set AWS_REGION (any value, such as us-east-1, for most self-hosted stores)');
    }
    return storage;
  }

  stage(source: Readable): Promise<StagedFile> {
    return this.#staging.stage(source);
  }

  async commit(staged: StagedFile, key: string): Promise<void> {
    await this.upload(staged.path, key, { bytes: staged.bytes, sha256: staged.sha256 });
    await staged.discard();
  }

  /**
   * Streams a local file to `key`, declaring its SHA-256 as the object's metadata (`x-amz-meta-sha256`):
   * one PUT, or a multipart upload in 8 MiB parts that is aborted, leaving no parts, if any part
   * fails. Resolves to the SHA-256 of the bytes actually sent.
   */
  async upload(path: string, key: string, declared: { bytes: number; sha256: string }): Promise<string> {
    const objectKey = this.#objectKey(key);
    const hash = createHash('sha256');
    const file = createReadStream(path);
    try {
      await new Upload({
        client: this.#client,
        params: {
          Bucket: this.#location.bucket,
          Key: objectKey,
          Body: Readable.from(hashing(file, hash)),
          ContentLength: declared.bytes,
          Metadata: { sha256: declared.sha256 },
        },
        partSize: PART_BYTES,
        // One part at a time: with more, the other uploaders go on reading and sending the rest of the file after a part has failed.
        queueSize: 1,
        leavePartsOnError: false,
      }).done();
    } catch (err) {
      throw unavailable(err);
    } finally {
      file.destroy();
    }
    return hash.digest('hex');
  }

  /** The object under `key`, or undefined when there is none. */
  async stat(key: string): Promise<StoredObject | undefined> {
    try {
      const head = await this.#client.send(new HeadObjectCommand({ Bucket: this.#location.bucket, Key: this.#objectKey(key) }));
      return { bytes: head.ContentLength ?? 0, sha256: head.Metadata?.sha256 ?? null };
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw unavailable(err);
    }
  }

  async remove(key: string): Promise<void> {
    const objectKey = this.#objectKey(key);
    try {
      // S3 answers 204 for a key it does not hold.
      await this.#client.send(new DeleteObjectCommand({ Bucket: this.#location.bucket, Key: objectKey }));
    } catch (err) {
      throw unavailable(err);
    }
  }

  open(key: string, range?: ByteRange): Promise<Readable> {
    return this.#read(this.#client, key, range);
  }

  openPublic(key: string, range?: ByteRange): Promise<Readable> {
    return this.#read(this.#publicReads, key, range);
  }

  async #read(client: S3Client, key: string, range: ByteRange | undefined): Promise<Readable> {
    const objectKey = this.#objectKey(key);
    let body: unknown;
    try {
      const answer = await client.send(
        new GetObjectCommand({ Bucket: this.#location.bucket, Key: objectKey, Range: range === undefined ? undefined : `bytes=${range.start}-${range.end}` }),
      );
      body = answer.Body;
    } catch (err) {
      // A missing file rejects as the SDK says it (NoSuchKey), as a missing file on disk does: a fault of Herald's records, not of the store.
      if ((err as { name?: unknown }).name === 'NoSuchKey') throw err;
      throw unavailable(err);
    }
    if (!(body instanceof Readable)) throw unavailable(new Error('no body'));
    return body;
  }

  removeStagedBefore(cutoff: Date): Promise<number> {
    return this.#staging.removeStagedBefore(cutoff);
  }

  async *storedAfter(after: string | undefined): AsyncIterable<StoredFile[]> {
    const prefix = this.#location.prefix === '' ? '' : `${this.#location.prefix}/`;
    const input = { Bucket: this.#location.bucket, Prefix: prefix, ...(after === undefined ? {} : { StartAfter: `${prefix}${after}` }) };
    try {
      // S3 lists in key order.
      for await (const page of paginateListObjectsV2({ client: this.#client }, input)) {
        // Other objects in the bucket are not Herald's: only keys it makes are looked at.
        const files = (page.Contents ?? []).flatMap(({ Key, LastModified }) => {
          const key = Key?.slice(prefix.length) ?? '';
          return LastModified !== undefined && isValidStorageKey(key) ? [{ key, writtenAt: LastModified }] : [];
        });
        if (files.length > 0) yield files;
      }
    } catch (err) {
      throw unavailable(err);
    }
  }

  #objectKey(key: string): string {
    if (!isValidStorageKey(key)) throw new Error('Invalid storage key');
    return this.#location.prefix === '' ? key : `${this.#location.prefix}/${key}`;
  }
}

async function* hashing(source: AsyncIterable<Buffer>, hash: Hash): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    hash.update(chunk);
    yield chunk;
  }
}

function statusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

/**
 * The store failed a call (refused, timed out, or answered an error after the SDK's retries): 503,
 * naming only the error's code and the HTTP status, never a host, key or credential.
 */
function unavailable(err: unknown): DomainError {
  const { code, name } = err as { code?: unknown; name?: unknown };
  const reason = [code, name].find((v): v is string => typeof v === 'string' && /^[A-Za-z][\w.-]{0,63}$/.test(v) && v !== 'Error') ?? 'no reason given';
  const status = statusOf(err);
  const what = status === undefined ? 'did not answer' : `answered HTTP ${status}`;
  return new DomainError('storage_unavailable', `Media storage not available: the object store ${what} (${reason})`);
}
