import { randomUUID } from 'node:crypto';
import multipart from '@fastify/multipart';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * An in-process Mastodon, written from the documented client API, for the calls Herald makes
 * (no Mastodon-compatible server can be installed here):
 * - docs.joinmastodon.org/methods/accounts/#verify_credentials: 200 Account, 401 `{"error":"The access token is invalid"}`;
 * - /methods/media/#v2: POST /api/v2/media answers 200 when processed at once (images), 202 with
 *   `url: null` while processing (video); GET /api/v1/media/:id answers 206 while processing,
 *   200 once `url` is set, 422 when processing failed, 404 for media not the caller's;
 * - /methods/statuses/#create: `Idempotency-Key` "stored for up to 1 hour" per account (a replay
 *   answers the original status, whatever the body); 422 "Validation failed: ..." for text over
 *   the limit or with more than 4 attachments; 422 for media still processing; 404 for an unknown
 *   in_reply_to_id;
 * - /api/rate-limits: 429 with X-RateLimit-Limit, -Remaining and -Reset (an ISO 8601 timestamp);
 * - /entities/Error: `{"error": "..."}` bodies.
 * Faults a test plans are taken by the next matching request, in order.
 */

export interface FakeAccount {
  id: string;
  username: string;
  token: string;
}

export interface FakeStatus {
  id: string;
  accountId: string;
  /** By the instance's clock. */
  createdAt: string;
  text: string;
  mediaIds: string[];
  inReplyToId: string | null;
  url: string;
}

export interface FakeMedia {
  id: string;
  accountId: string;
  type: 'image' | 'video';
  bytes: Buffer;
  mime: string;
  description: string | null;
  /** Polls left before processing ends; 0 once processed. */
  pollsLeft: number;
  failed: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  idempotencyKey: string | null;
  body: unknown;
}

export type FakeFault =
  /** Answers without doing anything. */
  | { on: 'statuses' | 'media' | 'timeline'; kind: 'answer'; status: number; headers?: Record<string, string>; body?: unknown }
  /** Creates the status, then answers this status instead of the status. */
  | { on: 'statuses'; kind: 'commitThenAnswer'; status: number }
  /** Creates the status, then cuts the connection. */
  | { on: 'statuses'; kind: 'commitThenDrop' };

export interface MastodonFake {
  url: string;
  addAccount(username: string, displayName?: string): FakeAccount;
  /** Revokes the account's token and issues a new one, as a user does from the instance's settings. */
  rotateToken(accountId: string): string;
  /** What the instance holds: statuses in creation order, media by id. */
  statuses: FakeStatus[];
  media: Map<string, FakeMedia>;
  requests: RecordedRequest[];
  /** Queues a fault for the next matching request. */
  fail(fault: FakeFault): void;
  /** How video processing goes from now on: polls answered 206 before 200, or a failure (422). */
  videoProcessing: { polls: number; fails: boolean };
  /** Moves the instance's clock (idempotency keys expire after an hour of it). */
  advance(ms: number): void;
  close(): Promise<void>;
}

const MAX_CHARACTERS = 500;
const KEY_TTL_MS = 3_600_000;

export async function startMastodonFake(): Promise<MastodonFake> {
  const app = Fastify({ logger: false });
  await app.register(multipart, { limits: { fileSize: 50 * 1024 * 1024 } });
  const accounts = new Map<string, FakeAccount & { displayName: string }>();
  const statuses: FakeStatus[] = [];
  const media = new Map<string, FakeMedia>();
  const requests: RecordedRequest[] = [];
  const faults: FakeFault[] = [];
  const keys = new Map<string, { statusId: string; at: number }>();
  const videoProcessing = { polls: 2, fails: false };
  let nextId = 1;
  let offsetMs = 0;
  const now = () => Date.now() + offsetMs;
  let base = '';

  const authed = (req: FastifyRequest, reply: FastifyReply) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const account = token === undefined ? undefined : [...accounts.values()].find((a) => a.token === token);
    if (account === undefined) void reply.code(401).send({ error: 'The access token is invalid' });
    return account;
  };
  const takeFault = (on: FakeFault['on']) => {
    const index = faults.findIndex((f) => f.on === on);
    return index === -1 ? undefined : faults.splice(index, 1)[0];
  };
  const record = (req: FastifyRequest, body: unknown) => {
    const key = req.headers['idempotency-key'];
    requests.push({ method: req.method, path: req.url, idempotencyKey: typeof key === 'string' ? key : null, body });
  };
  const attachment = (m: FakeMedia) => ({
    id: m.id,
    type: m.type,
    url: m.pollsLeft === 0 && !m.failed ? `${base}/media/${m.id}` : null,
    description: m.description,
  });

  app.get('/api/v1/accounts/verify_credentials', async (req, reply) => {
    record(req, null);
    const account = authed(req, reply);
    if (account === undefined) return reply;
    return { id: account.id, username: account.username, acct: account.username, display_name: account.displayName };
  });

  app.post('/api/v2/media', async (req, reply) => {
    const account = authed(req, reply);
    if (account === undefined) return reply;
    let file: { bytes: Buffer; mime: string } | undefined;
    let description: string | null = null;
    for await (const part of req.parts()) {
      if (part.type === 'file') file = { bytes: await part.toBuffer(), mime: part.mimetype };
      else if (part.fieldname === 'description') description = String(part.value);
    }
    record(req, { file: file === undefined ? null : { bytes: file.bytes.length, mime: file.mime }, description });
    const fault = takeFault('media');
    if (fault?.kind === 'answer')
      return reply
        .code(fault.status)
        .headers(fault.headers ?? {})
        .send(fault.body ?? { error: 'Fault' });
    if (file === undefined) return reply.code(422).send({ error: "Validation failed: File can't be blank" });
    const video = file.mime.startsWith('video/');
    const m: FakeMedia = {
      id: String(nextId++),
      accountId: account.id,
      type: video ? 'video' : 'image',
      bytes: file.bytes,
      mime: file.mime,
      description,
      pollsLeft: video ? videoProcessing.polls : 0,
      failed: false,
    };
    media.set(m.id, m);
    return reply.code(video ? 202 : 200).send(attachment(m));
  });

  app.get<{ Params: { id: string } }>('/api/v1/media/:id', async (req, reply) => {
    record(req, null);
    const account = authed(req, reply);
    if (account === undefined) return reply;
    const m = media.get(req.params.id);
    if (m === undefined || m.accountId !== account.id) return reply.code(404).send({ error: 'Record not found' });
    if (m.pollsLeft > 0) {
      m.pollsLeft -= 1;
      if (m.pollsLeft === 0 && videoProcessing.fails) m.failed = true;
      return reply.code(206).send(attachment({ ...m, pollsLeft: 1 }));
    }
    if (m.failed) return reply.code(422).send({ error: 'Error processing thumbnail for uploaded media' });
    return attachment(m);
  });

  app.post<{ Body: { status?: string; media_ids?: string[]; in_reply_to_id?: string } }>('/api/v1/statuses', async (req, reply) => {
    record(req, req.body);
    const account = authed(req, reply);
    if (account === undefined) return reply;
    const key = req.headers['idempotency-key'];
    const scoped = typeof key === 'string' ? `${account.id}:${key}` : undefined;
    const remembered = scoped === undefined ? undefined : keys.get(scoped);
    const fault = takeFault('statuses');
    if (fault?.kind === 'answer')
      return reply
        .code(fault.status)
        .headers(fault.headers ?? {})
        .send(fault.body ?? { error: 'Fault' });
    if (remembered !== undefined && now() - remembered.at < KEY_TTL_MS) return statuses.find((s) => s.id === remembered.statusId);

    const text = req.body.status ?? '';
    const mediaIds = req.body.media_ids ?? [];
    if (text === '' && mediaIds.length === 0) return reply.code(422).send({ error: "Validation failed: Text can't be blank" });
    if ([...text].length > MAX_CHARACTERS) return reply.code(422).send({ error: `Validation failed: Text character limit of ${MAX_CHARACTERS} exceeded` });
    if (mediaIds.length > 4) return reply.code(422).send({ error: 'Validation failed: Media attachments too many (maximum 4)' });
    for (const id of mediaIds) {
      const m = media.get(id);
      if (m === undefined || m.accountId !== account.id) return reply.code(404).send({ error: 'Record not found' });
      if (m.pollsLeft > 0 || m.failed) return reply.code(422).send({ error: 'Cannot attach files that have not finished processing. Try again in a moment!' });
    }
    if (req.body.in_reply_to_id !== undefined && !statuses.some((s) => s.id === req.body.in_reply_to_id))
      return reply.code(404).send({ error: 'Record not found' });

    const id = String(nextId++);
    const status: FakeStatus = {
      id,
      accountId: account.id,
      createdAt: new Date(now()).toISOString(),
      text,
      mediaIds,
      inReplyToId: req.body.in_reply_to_id ?? null,
      url: `${base}/@${account.username}/${id}`,
    };
    statuses.push(status);
    if (scoped !== undefined) keys.set(scoped, { statusId: id, at: now() });
    if (fault?.kind === 'commitThenAnswer') return reply.code(fault.status).send({ error: 'Service unavailable' });
    if (fault?.kind === 'commitThenDrop') {
      req.raw.socket.destroy();
      return reply;
    }
    return {
      id,
      url: status.url,
      content: `<p>${escapeHtml(text)}</p>`,
      in_reply_to_id: status.inReplyToId,
      media_attachments: mediaIds.map((m) => attachment(media.get(m)!)),
    };
  });

  // docs.joinmastodon.org/methods/accounts/#statuses: newest first, `limit` at most 40, `max_id` pages back.
  app.get<{ Params: { id: string }; Querystring: { limit?: string; max_id?: string } }>('/api/v1/accounts/:id/statuses', async (req, reply) => {
    record(req, null);
    if (authed(req, reply) === undefined) return reply;
    const fault = takeFault('timeline');
    if (fault?.kind === 'answer')
      return reply
        .code(fault.status)
        .headers(fault.headers ?? {})
        .send(fault.body ?? { error: 'Fault' });
    if (!accounts.has(req.params.id)) return reply.code(404).send({ error: 'Record not found' });
    const limit = Math.min(40, Number(req.query.limit ?? 20));
    const older = statuses
      .filter((s) => s.accountId === req.params.id && (req.query.max_id === undefined || Number(s.id) < Number(req.query.max_id)))
      .reverse();
    return older
      .slice(0, limit)
      .map((s) => ({ id: s.id, created_at: s.createdAt, in_reply_to_id: s.inReplyToId, url: s.url, content: `<p>${escapeHtml(s.text)}</p>` }));
  });

  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;

  return {
    url: base,
    addAccount(username, displayName = '') {
      const account = { id: String(nextId++), username, token: randomUUID(), displayName };
      accounts.set(account.id, account);
      return { id: account.id, username, token: account.token };
    },
    rotateToken(accountId) {
      const account = accounts.get(accountId);
      if (account === undefined) throw new Error(`no account ${accountId}`);
      account.token = randomUUID();
      return account.token;
    },
    statuses,
    media,
    requests,
    fail: (fault) => faults.push(fault),
    videoProcessing,
    advance(ms) {
      offsetMs += ms;
    },
    close: () => app.close(),
  };
}

function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#39;');
}
