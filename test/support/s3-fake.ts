import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { S3Storage } from '../../src/adapters/storage/s3-storage.js';

/** The one key pair s3rver knows, and the region the tests sign for (the fake takes any). */
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const REGION = 'us-east-1';

interface KoaContext {
  method: string;
  path: string;
  query: Record<string, string | string[] | undefined>;
  status: number;
  type: string;
  body: unknown;
}
type Middleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void>;
interface S3rver {
  middleware: Middleware[];
  store: { getResourcePath(bucket: string, key: string | undefined, resource: string): string };
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
type S3rverClass = new (options: object) => S3rver;

export interface S3Fake {
  /** The store's endpoint: `http://127.0.0.1:<port>`. */
  url: string;
  bucket: string;
  /** The standard AWS variables (and HERALD_S3_FORCE_PATH_STYLE) that make the `herald` binary reach the fake, or a proxy in front of it. */
  env(endpoint?: string): Record<string, string>;
  /** An S3Storage on the fake's bucket under `prefix` ('' for none), reached at `endpoint` (a proxy) or directly, staging in `stagingRoot`. */
  storage(stagingRoot: string, prefix: string, endpoint?: string): Promise<S3Storage>;
  /** The bytes and declared SHA-256 of the object at `key`, or undefined when there is none. */
  object(key: string): Promise<{ bytes: Buffer; sha256: string | undefined } | undefined>;
  /** Every key in the bucket. */
  keys(): Promise<string[]>;
  /** Writes an object as another program sharing the bucket would. */
  put(key: string, bytes: Buffer): Promise<void>;
  /** The keys of multipart uploads begun and neither completed nor aborted, as ListMultipartUploads gives them. */
  incompleteUploads(): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * @20minutes/s3rver on 127.0.0.1 and a port the system picks, storing in a temporary folder, with one
 * bucket. s3rver implements neither AbortMultipartUpload nor ListMultipartUploads; both are added
 * here over its own folder of uploads in progress, so that an aborted upload really goes.
 */
export async function startS3Fake(bucket = 'herald-media'): Promise<S3Fake> {
  const directory = await mkdtemp(join(tmpdir(), 'herald-s3-'));
  const S3rver = createRequire(import.meta.url)('@20minutes/s3rver') as S3rverClass;
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
    // A proxy in front (a fault proxy) sends the upstream's Host, which the signature covers.
    allowMismatchedSignatures: true,
  });
  server.middleware.unshift(multipartUploadsOf(server));
  const { port } = await server.run();
  const url = `http://127.0.0.1:${port}`;
  const client = new S3Client({ endpoint: url, region: REGION, credentials: CREDENTIALS, forcePathStyle: true });
  return {
    url,
    bucket,
    env: (endpoint = url) => ({
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_REGION: REGION,
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      HERALD_S3_FORCE_PATH_STYLE: 'true',
    }),
    storage: (stagingRoot, prefix, endpoint = url) =>
      S3Storage.create({ location: { bucket, prefix }, stagingRoot, client: { endpoint, region: REGION, credentials: CREDENTIALS, forcePathStyle: true } }),
    async object(key) {
      try {
        const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        return { bytes: Buffer.from((await answer.Body?.transformToByteArray()) ?? []), sha256: answer.Metadata?.sha256 };
      } catch (err) {
        if ((err as Error).name === 'NoSuchKey') return undefined;
        throw err;
      }
    },
    async keys() {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
      return (listed.Contents ?? []).map((o) => o.Key ?? '');
    },
    async put(key, bytes) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }));
    },
    async incompleteUploads() {
      const listed = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
      return (listed.Uploads ?? []).map((u) => u.Key ?? '');
    },
    async close() {
      client.destroy();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** ListMultipartUploads (`GET /bucket?uploads`) and AbortMultipartUpload (`DELETE /bucket/key?uploadId=`), over s3rver's folder of uploads. */
function multipartUploadsOf(server: S3rver): Middleware {
  const uploads = (bucket: string) => server.store.getResourcePath(bucket, undefined, 'uploads');
  return async (ctx, next) => {
    const bucket = /^\/([^/]+)\/?$/.exec(ctx.path)?.[1];
    if (ctx.method === 'GET' && bucket !== undefined && 'uploads' in ctx.query) {
      const ids = await readdir(uploads(bucket)).catch(() => []);
      const listed = await Promise.all(
        ids.map(async (id) => `<Upload><Key>${await readFile(join(uploads(bucket), id, 'key'), 'utf8')}</Key><UploadId>${id}</UploadId></Upload>`),
      );
      ctx.type = 'application/xml';
      ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<ListMultipartUploadsResult><Bucket>${bucket}</Bucket><IsTruncated>false</IsTruncated>${listed.join('')}</ListMultipartUploadsResult>`;
      return;
    }
    const objectBucket = /^\/([^/]+)\/./.exec(ctx.path)?.[1];
    const uploadId = ctx.query.uploadId;
    if (ctx.method === 'DELETE' && objectBucket !== undefined && typeof uploadId === 'string' && /^[0-9a-f]+$/.test(uploadId)) {
      await rm(join(uploads(objectBucket), uploadId), { recursive: true, force: true });
      ctx.status = 204;
      return;
    }
    await next();
  };
}
