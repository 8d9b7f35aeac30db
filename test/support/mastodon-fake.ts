import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
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
 * - /entities/Error: `{"error": "..."}` bodies;
 * - /methods/apps/#create: POST /api/v1/apps (form or JSON; `client_name` and one `redirect_uris`
 *   required, `scopes` space-separated, `read` by default) answers the Application with `client_id`,
 *   `client_secret` and `client_secret_expires_at: 0`; 422 "Validation failed: Redirect URI must be an
 *   absolute URI." for a redirect URI that is not one;
 * - /methods/oauth/#authorize: GET /oauth/authorize consents as the account `consentAs` names (by
 *   default the last added): 302 to `redirect_uri?code&state`, or to `redirect_uri?error=access_denied
 *   &error_description&state` after `refuseNextConsent()`; an unknown client, a `redirect_uri` not the
 *   registered one, a scope beyond the app's, a `response_type` not `code` or a PKCE method not S256
 *   get a 400 HTML page and no redirect; a code lives 10 minutes (Doorkeeper's default) and is used once;
 * - /methods/oauth/#token: POST /oauth/token (form or JSON; client credentials in the body or HTTP Basic)
 *   grants `authorization_code` only, answering `{access_token, token_type: "Bearer", scope, created_at}`
 *   where the access token is the consenting account's own; Doorkeeper's errors: 400 `invalid_request`
 *   "Missing required parameter: x.", 401 `invalid_client`, 400 `invalid_grant` (an unknown, used, expired
 *   or another app's code, another `redirect_uri`, a wrong `code_verifier`), 400 `unsupported_grant_type`;
 * - /spec/oauth/: PKCE with `code_challenge_method=S256` only (since 4.3); a code issued with a challenge
 *   needs its `code_verifier`;
 * - /methods/oauth/#revoke: POST /oauth/revoke (`token`, client credentials) answers 200 `{}`, also for an
 *   unknown token; the token stops working (the account gets a new one, as `rotateToken`); 403
 *   `unauthorized_client` without valid client credentials or for another app's token (Doorkeeper).
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

export interface FakeApp {
  id: string;
  name: string;
  website: string | null;
  redirectUri: string;
  scopes: string[];
  clientId: string;
  clientSecret: string;
  /** By the instance's clock. */
  createdAt: string;
}

export interface FakeRevocation {
  token: string;
  clientId: string;
  /** False for a token the instance did not know (still answered 200). */
  revoked: boolean;
  /** By the instance's clock. */
  at: string;
}

export type FakeFault =
  /** Answers without doing anything. */
  | { on: 'statuses' | 'media' | 'timeline' | 'token'; kind: 'answer'; status: number; headers?: Record<string, string>; body?: unknown }
  /**
   * POST /oauth/token answers 200 with a JSON body of `bytes` bytes (an access token that never
   * ends), streamed without a length, gzip-compressed when `gzip`: a hostile instance's answer.
   */
  | { on: 'token'; kind: 'endless'; bytes: number; gzip: boolean }
  /** POST /oauth/token exchanges the code as usual but hands out an access token of `length` characters. */
  | { on: 'token'; kind: 'longToken'; length: number }
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
  /** Apps registered through POST /api/v1/apps, in order. */
  apps: FakeApp[];
  /** Revocations POST /oauth/revoke answered 200, in order. */
  revocations: FakeRevocation[];
  /** The account that consents at GET /oauth/authorize from now on (by default the last added). */
  consentAs(account: FakeAccount): void;
  /** The next consent is refused (`error=access_denied`), as a user does by pressing "Deny". */
  refuseNextConsent(): void;
  /**
   * A slow instance: each POST /api/v1/statuses is held open `holdMs` (real time, bounded by the
   * test) after its Idempotency-Key is looked up and before the status is created and the key
   * stored, as Mastodon does; `inFlight` counts those being answered now, `most` the most at once.
   */
  statusCalls: { holdMs: number; inFlight: number; most: number };
  /** Moves the instance's clock (idempotency keys expire after an hour of it, authorization codes after 10 minutes). */
  advance(ms: number): void;
  close(): Promise<void>;
}

const MAX_CHARACTERS = 500;
const KEY_TTL_MS = 3_600_000;
const CODE_TTL_MS = 600_000;
const OAUTH_ERRORS = {
  invalid_client: 'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.',
  invalid_grant:
    'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.',
  unsupported_grant_type: 'The authorization grant type is not supported by the authorization server.',
  unauthorized_client: 'You are not authorized to revoke this token',
};

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
  const statusCalls = { holdMs: 0, inFlight: 0, most: 0 };
  const apps: FakeApp[] = [];
  const revocations: FakeRevocation[] = [];
  const codes = new Map<
    string,
    { clientId: string; redirectUri: string; accountId: string; scope: string; challenge: string | null; expiresAt: number; used: boolean }
  >();
  /** Tokens handed out by POST /oauth/token, to the app they were issued to. */
  const issuedTo = new Map<string, string>();
  const vapidKey = Buffer.concat([Buffer.from([4]), randomBytes(64)]).toString('base64url');
  let consenting: string | undefined;
  let refuseNext = false;
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
    statusCalls.inFlight += 1;
    statusCalls.most = Math.max(statusCalls.most, statusCalls.inFlight);
    try {
      if (statusCalls.holdMs > 0) await new Promise((resolve) => setTimeout(resolve, statusCalls.holdMs));
    } finally {
      statusCalls.inFlight -= 1;
    }

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

  // OAuth (Doorkeeper): form bodies are read here only, the API routes above keep JSON and multipart.
  await app.register((oauth, _options, done) => {
    oauth.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, parsed) =>
      parsed(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );
    const fields = (req: FastifyRequest): Record<string, unknown> =>
      typeof req.body === 'object' && req.body !== null && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {};
    const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
    const oauthError = (reply: FastifyReply, status: number, error: string, description: string) => {
      void reply.code(status).headers({ 'cache-control': 'no-store', pragma: 'no-cache' });
      if (status === 401) void reply.header('www-authenticate', `Bearer realm="Doorkeeper", error="${error}", error_description="${description}"`);
      return reply.send({ error, error_description: description });
    };
    const missing = (reply: FastifyReply, name: string) => oauthError(reply, 400, 'invalid_request', `Missing required parameter: ${name}.`);
    /** Doorkeeper's client authentication: HTTP Basic first, then `client_id` and `client_secret` in the body. */
    const client = (req: FastifyRequest, params: Record<string, unknown>) => {
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const pair = basic === undefined ? undefined : Buffer.from(basic, 'base64').toString('utf8');
      const colon = pair?.indexOf(':') ?? -1;
      const [id, secret] =
        pair !== undefined && colon !== -1 ? [pair.slice(0, colon), pair.slice(colon + 1)] : [text(params.client_id), text(params.client_secret)];
      return apps.find((a) => id !== undefined && a.clientId === id && a.clientSecret === secret);
    };
    const redirectUriProblem = (uri: string | undefined) => {
      if (uri === undefined) return "can't be blank";
      if (!URL.canParse(uri)) return 'must be an absolute URI.';
      if (uri.includes('#')) return 'cannot contain a fragment.';
      return undefined;
    };

    oauth.post('/api/v1/apps', async (req, reply) => {
      const params = fields(req);
      record(req, params);
      const name = text(params.client_name);
      const uris: unknown = params.redirect_uris;
      const redirectUri = Array.isArray(uris) && uris.length === 1 ? text(uris[0]) : text(uris);
      const scopes = (text(params.scopes) ?? 'read').split(' ').filter((s) => s !== '');
      if (name === undefined) return reply.code(422).send({ error: "Validation failed: Application name can't be blank" });
      const problem = redirectUriProblem(redirectUri);
      if (problem !== undefined || redirectUri === undefined) return reply.code(422).send({ error: `Validation failed: Redirect URI ${problem}` });
      const registered: FakeApp = {
        id: String(nextId++),
        name,
        website: text(params.website) ?? null,
        redirectUri,
        scopes,
        clientId: randomBytes(32).toString('base64url'),
        clientSecret: randomBytes(32).toString('base64url'),
        createdAt: new Date(now()).toISOString(),
      };
      apps.push(registered);
      return {
        id: registered.id,
        name: registered.name,
        website: registered.website,
        scopes: registered.scopes,
        redirect_uris: [registered.redirectUri],
        redirect_uri: registered.redirectUri,
        vapid_key: vapidKey,
        client_id: registered.clientId,
        client_secret: registered.clientSecret,
        client_secret_expires_at: 0,
      };
    });

    oauth.get<{ Querystring: Record<string, string | undefined> }>('/oauth/authorize', async (req, reply) => {
      record(req, null);
      const { response_type: responseType, client_id: clientId, redirect_uri: redirectUri, scope, state } = req.query;
      const { code_challenge: challenge, code_challenge_method: method } = req.query;
      const page = (message: string) =>
        reply
          .code(400)
          .type('text/html; charset=utf-8')
          .send(`<!DOCTYPE html><html><body><h1>An error has occurred</h1><p>${escapeHtml(message)}</p></body></html>`);
      const registered = apps.find((a) => a.clientId === clientId);
      if (registered === undefined) return page(OAUTH_ERRORS.invalid_client);
      if (redirectUri !== registered.redirectUri) return page("The requested redirect uri is malformed or doesn't match client redirect URI.");
      if (responseType !== 'code') return page('The authorization server does not support this response type.');
      const scopes = (scope ?? 'read').split(' ').filter((s) => s !== '');
      if (scopes.length === 0 || scopes.some((s) => !registered.scopes.includes(s))) return page('The requested scope is invalid, unknown, or malformed.');
      if (challenge !== undefined && method !== 'S256') return page('The code_challenge_method must be S256.');
      const account = consenting === undefined ? [...accounts.values()].at(-1) : accounts.get(consenting);
      if (account === undefined) return page('Mastodon (fake): no account is signed in (addAccount first)');
      const back = (params: Record<string, string>) => {
        const target = new URL(redirectUri);
        for (const [key, value] of Object.entries(params)) target.searchParams.set(key, value);
        if (state !== undefined) target.searchParams.set('state', state);
        return reply.redirect(target.toString(), 302);
      };
      if (refuseNext) {
        refuseNext = false;
        return back({ error: 'access_denied', error_description: 'The resource owner or authorization server denied the request.' });
      }
      const code = randomBytes(32).toString('base64url');
      codes.set(code, {
        clientId: registered.clientId,
        redirectUri,
        accountId: account.id,
        scope: scopes.join(' '),
        challenge: challenge ?? null,
        expiresAt: now() + CODE_TTL_MS,
        used: false,
      });
      return back({ code });
    });

    oauth.post('/oauth/token', async (req, reply) => {
      const params = fields(req);
      record(req, params);
      const fault = takeFault('token');
      if (fault?.kind === 'answer')
        return reply
          .code(fault.status)
          .headers(fault.headers ?? {})
          .send(fault.body ?? { error: 'Fault' });
      if (fault?.kind === 'endless') return endlessToken(reply, fault.bytes, fault.gzip);
      const grantType = text(params.grant_type);
      if (grantType === undefined) return missing(reply, 'grant_type');
      if (grantType !== 'authorization_code') return oauthError(reply, 400, 'unsupported_grant_type', OAUTH_ERRORS.unsupported_grant_type);
      const held = codes.get(text(params.code) ?? '');
      const verifier = text(params.code_verifier);
      if (held?.challenge != null && verifier === undefined) return missing(reply, 'code_verifier');
      if (text(params.redirect_uri) === undefined) return missing(reply, 'redirect_uri');
      const registered = client(req, params);
      if (registered === undefined) return oauthError(reply, 401, 'invalid_client', OAUTH_ERRORS.invalid_client);
      const account = held === undefined ? undefined : accounts.get(held.accountId);
      const verified =
        held?.challenge == null
          ? verifier === undefined
          : verifier !== undefined && createHash('sha256').update(verifier).digest('base64url') === held.challenge;
      if (
        held === undefined ||
        account === undefined ||
        held.used ||
        now() >= held.expiresAt ||
        held.clientId !== registered.clientId ||
        held.redirectUri !== params.redirect_uri ||
        !verified
      )
        return oauthError(reply, 400, 'invalid_grant', OAUTH_ERRORS.invalid_grant);
      held.used = true;
      if (fault?.kind === 'longToken') account.token = 'a'.repeat(fault.length);
      issuedTo.set(account.token, registered.clientId);
      return reply
        .headers({ 'cache-control': 'no-store', pragma: 'no-cache' })
        .send({ access_token: account.token, token_type: 'Bearer', scope: held.scope, created_at: Math.floor(now() / 1000) });
    });

    oauth.post('/oauth/revoke', async (req, reply) => {
      const params = fields(req);
      record(req, params);
      const registered = client(req, params);
      if (registered === undefined) return oauthError(reply, 403, 'unauthorized_client', OAUTH_ERRORS.unauthorized_client);
      const token = text(params.token);
      if (token === undefined) return {};
      const owner = issuedTo.get(token);
      if (owner !== undefined && owner !== registered.clientId) return oauthError(reply, 403, 'unauthorized_client', OAUTH_ERRORS.unauthorized_client);
      const account = [...accounts.values()].find((a) => a.token === token);
      if (account !== undefined) {
        account.token = randomUUID();
        issuedTo.delete(token);
      }
      revocations.push({ token, clientId: registered.clientId, revoked: account !== undefined, at: new Date(now()).toISOString() });
      return {};
    });
    done();
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
    statusCalls,
    apps,
    revocations,
    consentAs(account) {
      if (!accounts.has(account.id)) throw new Error(`no account ${account.id}`);
      consenting = account.id;
    },
    refuseNextConsent() {
      refuseNext = true;
    },
    advance(ms) {
      offsetMs += ms;
    },
    close: () => app.close(),
  };
}

function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#39;');
}

/** `{"access_token":"aaaa…` of `bytes` bytes, produced as it is sent (never whole in memory), gzip-compressed when asked. */
function endlessToken(reply: FastifyReply, bytes: number, gzip: boolean): FastifyReply {
  const chunk = Buffer.alloc(64 * 1024, 'a');
  function* body() {
    yield Buffer.from('{"access_token":"');
    for (let sent = 0; sent < bytes; sent += chunk.length) yield chunk;
  }
  const stream = gzip ? Readable.from(body()).pipe(createGzip()) : Readable.from(body());
  // Herald stops reading at its limit: the cut connection is expected.
  stream.on('error', () => undefined);
  void reply.code(200).header('content-type', 'application/json').header('cache-control', 'no-store');
  if (gzip) void reply.header('content-encoding', 'gzip');
  return reply.send(stream);
}
