import { randomBytes } from 'node:crypto';
import multipart from '@fastify/multipart';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * What the non-Meta platform fakes (X, Pinterest, YouTube, TikTok, Reddit) share: answers, planned faults, the request
 * recorder, the Fastify scaffold and the route that takes a fault, the clock, OAuth tokens and codes, the consent page,
 * live settings and small readers. A kit of its own rather than part of meta-fake-kit.ts: Meta's error body, Graph
 * versions and secret redaction run through every piece of that kit, and these platforms share none of them.
 *
 * Exports:
 * - `Answer` `{status, body?, headers?, made?}`: what a handler gives back; `isAnswer(value)`.
 * - `Fault` (`{kind:'answer', status, headers?, body?}` | `{kind:'commitThenDrop'}`), `FaultQueue<T>` (`push(target,
 *   fault)`, `take(target)`, `peek(target)`), `plannedAnswer(fault, defaultBody, defaultHeaders?)`.
 * - `RecordedRequest`, `Recorder` `{requests, record(req, body)}`: `authorization` as its scheme only, multipart as a
 *   summary, bytes as `{bytes: <count>}`.
 * - `MultipartBody` (`fields` by name, `sequence` as sent, `beforeFile`, `files`, `fieldsBeforeFile()`, `summary()`).
 * - `createFakeApp({bodyLimit, multipartFileSize?, jsonError?, rawBodies?, errorBody, notFoundBody})`;
 *   `fakeRoute(app, state, {method, url, target, admit?, faultAnswer, dropWhenMade?, handle})`: read the body
 *   (multipart when the app takes it) → record → admit → planned fault → handler → answer (or, for `commitThenDrop`, the
 *   handler's work then a destroyed socket); `listenLocal(app)` → url.
 * - `FakeOptions`, `Fake<User, Target>`: what every fake takes and gives; `createFakeState(now?)` → `FakeState`
 *   `{clock, now, recorder, faults, tokens}`; `fakeControls(app, state, consent)`: the members of `Fake` the kit wires;
 *   `withSettings(fake, settings, keys)`: settings a test may change mid-run, as properties; `Clock` `{now, advance(ms)}`.
 * - `TokenStore` (`new TokenStore(now)`): `issue(kind, token, {subject, scope, ttlMs?, grant?})`, `live(kind, token)`,
 *   `bearer(req)`, `revoke(token)`, `kill(where)`, `tokens`; `IssuedToken`; `bearerToken(req)`.
 * - `CodeStore<C>` (`new CodeStore(now, ttlMs)`): `issue(code, data)`, `redeem(code)` (single use, whatever the outcome).
 * - `installConsentPage(config)` → `ConsentPage` (`authorizations`, `consentAs`, `refuseNextConsent`); `stateOf(query)`;
 *   `Authorization<Who>`, `Revocation`, `HintedRevocation`.
 * - `basicCredentials(req)`, `basicClientMatches(req, id, secret)`; `stringFields(value)`, `header(req, name)`,
 *   `isObject`, `formDecode`, `escapeXml`, `base62(length)`, `randomDigits(length)`.
 * Faults a test plans are taken by the next matching request, in order. No timers: the clock is read on demand.
 */

// --- Answers and faults ----------------------------------------------------------------------------

export interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** The upload request that completed the work (what a `dropWhenMade` route's commitThenDrop waits for). */
  made?: boolean;
}

export function isAnswer(value: object): value is Answer {
  return 'status' in value;
}

export type Fault =
  /** Answers without doing anything (each fake says what body it defaults to). */
  | { kind: 'answer'; status: number; headers?: Record<string, string>; body?: unknown }
  /** Does the work (stores the post, rotates the token, ...), then cuts the connection without answering. */
  | { kind: 'commitThenDrop' };

export type AnswerFault = Extract<Fault, { kind: 'answer' }>;

export class FaultQueue<T extends string> {
  private readonly queue: { target: T; fault: Fault }[] = [];

  push(target: T, fault: Fault): void {
    this.queue.push({ target, fault });
  }

  /** The first fault planned for this target, removed from the queue. */
  take(target: T): Fault | undefined {
    const index = this.queue.findIndex((f) => f.target === target);
    return index === -1 ? undefined : this.queue.splice(index, 1)[0]?.fault;
  }

  /** The first fault planned for this target, left in the queue. */
  peek(target: T): Fault | undefined {
    return this.queue.find((f) => f.target === target)?.fault;
  }
}

/** A planned answer: its body, else the platform's for the status; the defaults' headers under its own. */
export function plannedAnswer(fault: AnswerFault, defaultBody: (status: number) => unknown, defaultHeaders: Record<string, string> = {}): Answer {
  return { status: fault.status, headers: { ...defaultHeaders, ...fault.headers }, body: fault.body ?? defaultBody(fault.status) };
}

// --- Recording -------------------------------------------------------------------------------------

export interface RecordedRequest {
  method: string;
  /** With the query string. */
  path: string;
  /** Lower-case names; `authorization` holds only its scheme (`Bearer`, `Basic`). */
  headers: Record<string, string>;
  /** JSON or form bodies as parsed; multipart as `{fields, files: {name: {bytes (a count), mime, filename}}}`; raw
   * bytes (uploads) as `{bytes: <count>}`. */
  body: unknown;
}

export interface Recorder {
  requests: RecordedRequest[];
  record(req: FastifyRequest, body: unknown): void;
}

/** A request's headers as a recorder keeps them: lower-case names, `authorization` only its scheme. */
export function recordedHeaders(req: FastifyRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    headers[name] = name === 'authorization' ? (String(value).split(' ')[0] ?? '') : Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

function createRecorder(): Recorder {
  const requests: RecordedRequest[] = [];
  return {
    requests,
    record(req, body) {
      const headers = recordedHeaders(req);
      const recorded = body instanceof MultipartBody ? body.summary() : Buffer.isBuffer(body) ? { bytes: body.length } : body;
      requests.push({ method: req.method, path: req.url, headers, body: recorded });
    },
  };
}

/** A multipart body. S3 POST policies read only the fields before the file, so the order is kept. */
export class MultipartBody {
  /** By name (a repeated field: the last). */
  fields: Record<string, string> = {};
  /** In the order sent; fields after the file part included. */
  sequence: [string, string][] = [];
  /** Field names sent before the first file part. */
  beforeFile = new Set<string>();
  files: Record<string, { bytes: Buffer; mime: string; filename: string }> = {};

  /** The fields S3 reads: those whose name was sent before the file. */
  fieldsBeforeFile(): Record<string, string> {
    return Object.fromEntries(this.sequence.filter(([name]) => this.beforeFile.has(name)));
  }

  summary() {
    return {
      fields: { ...this.fields },
      files: Object.fromEntries(Object.entries(this.files).map(([name, f]) => [name, { bytes: f.bytes.length, mime: f.mime, filename: f.filename }])),
    };
  }
}

async function readMultipart(req: FastifyRequest): Promise<MultipartBody> {
  const body = new MultipartBody();
  let sawFile = false;
  for await (const part of req.parts()) {
    if (part.type === 'file') {
      body.files[part.fieldname] = { bytes: await part.toBuffer(), mime: part.mimetype, filename: part.filename };
      sawFile = true;
    } else {
      const value = String(part.value);
      body.fields[part.fieldname] = value;
      body.sequence.push([part.fieldname, value]);
      if (!sawFile) body.beforeFile.add(part.fieldname);
    }
  }
  return body;
}

// --- The server ------------------------------------------------------------------------------------

export interface FakeAppOptions {
  bodyLimit: number;
  /** Takes multipart bodies (read as `MultipartBody` by `fakeRoute`), files up to this size. */
  multipartFileSize?: number;
  /** Replaces Fastify's JSON parser: an empty body is no body, and bad JSON a 400 with this message. */
  jsonError?: string;
  /** Bodies of any other content type arrive as a Buffer (uploads). */
  rawBodies?: boolean;
  /** The platform's body for an error Fastify raises (bad JSON, too large, ...). */
  errorBody: (status: number, message: string) => unknown;
  notFoundBody: () => unknown;
}

export async function createFakeApp(options: FakeAppOptions): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, bodyLimit: options.bodyLimit });
  if (options.multipartFileSize !== undefined) await app.register(multipart, { limits: { fileSize: options.multipartFileSize } });
  if (options.jsonError !== undefined) acceptEmptyJson(app, options.jsonError);
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, raw, done) => {
    done(null, Object.fromEntries(new URLSearchParams(typeof raw === 'string' ? raw : raw.toString('utf8'))));
  });
  if (options.rawBodies === true) app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, raw, done) => done(null, raw));
  app.setErrorHandler((error: Error & { statusCode?: number }, _req, reply) => {
    const status = error.statusCode ?? 500;
    return reply.code(status).send(options.errorBody(status, error.message));
  });
  app.setNotFoundHandler((_req, reply) => reply.code(404).send(options.notFoundBody()));
  return app;
}

/** A JSON parser for APIs that take a call with no body yet labelled JSON (X's finalize); bad JSON is a 400. */
export function acceptEmptyJson(app: FastifyInstance, invalidMessage: string): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, raw, done) => {
    const text = typeof raw === 'string' ? raw : raw.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      const parsed: unknown = JSON.parse(text);
      done(null, parsed);
    } catch {
      done(Object.assign(new Error(invalidMessage), { statusCode: 400 }), undefined);
    }
  });
}

export interface FakeRoute<T extends string> {
  method: 'GET' | 'POST' | 'PUT';
  url: string | string[];
  target: T;
  /**
   * After recording, before a fault is taken: counts the call; headers for whatever answer goes out, and an answer to
   * give instead of the handler's (a rate limit).
   */
  admit?: (req: FastifyRequest) => { headers?: Record<string, string>; refusal?: Answer | null } | void;
  /** What a planned `answer` fault sends. */
  faultAnswer: (fault: AnswerFault) => Answer;
  /** A `commitThenDrop` waits for the answer marked `made` (the last piece of an upload) instead of the next request;
   * an `answer` fault is taken at once. */
  dropWhenMade?: boolean;
  handle: (req: FastifyRequest, body: unknown) => Answer | Promise<Answer>;
}

/**
 * A route that records the request, admits it, takes a planned fault for its target, runs the handler and answers;
 * `commitThenDrop` runs the handler (the work is done), then destroys the socket instead of answering.
 */
export function fakeRoute<T extends string>(app: FastifyInstance, state: Pick<FakeState<T>, 'faults' | 'recorder'>, route: FakeRoute<T>): void {
  const { faults, recorder } = state;
  const takesMultipart = app.hasRequestDecorator('isMultipart');
  for (const url of Array.isArray(route.url) ? route.url : [route.url])
    app.route({
      method: route.method,
      url,
      handler: async (req: FastifyRequest, reply: FastifyReply) => {
        const body: unknown = takesMultipart && req.isMultipart() ? await readMultipart(req) : req.body;
        recorder.record(req, body);
        const gate = route.admit?.(req) ?? {};
        const waiting = route.dropWhenMade === true && faults.peek(route.target)?.kind === 'commitThenDrop';
        const fault = waiting ? undefined : faults.take(route.target);
        const answer = fault?.kind === 'answer' ? route.faultAnswer(fault) : (gate.refusal ?? (await route.handle(req, body)));
        if (fault?.kind === 'commitThenDrop' || (waiting && answer.made === true && faults.take(route.target) !== undefined)) {
          req.raw.socket.destroy();
          return reply;
        }
        reply.code(answer.status).headers({ ...gate.headers, ...answer.headers });
        return answer.body === undefined ? reply.send() : reply.send(answer.body);
      },
    });
}

/** Gives `fake` a property per key that reads and writes `settings`, so that a test may change a setting mid-run. */
export function withSettings<F extends object, S extends object, K extends keyof S>(fake: F, settings: S, keys: K[]): F & Pick<S, K> {
  for (const key of keys)
    Object.defineProperty(fake, key, {
      get: () => settings[key],
      set: (value: S[K]) => {
        settings[key] = value;
      },
      enumerable: true,
      configurable: true,
    });
  return fake as F & Pick<S, K>;
}

/** Listens on 127.0.0.1, a free port; the origin. */
export async function listenLocal(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
}

/** What every fake takes and gives (the client id is named after the platform's word for it). */
export interface FakeOptions {
  clientSecret?: string;
  /** The fake's clock in ms (code and token lifetimes, timestamps, rate-limit windows); Date.now by default. */
  now?: () => number;
}

export interface Fake<User, Target extends string> {
  url: string;
  clientSecret: string;
  /** The account the consent page approves as from now on (the first added until then). */
  consentAs(user: User): void;
  /** The next consent is refused: back to redirect_uri with `error=access_denied`. */
  refuseNextConsent(): void;
  /** Every access token issued so far is refused from now on (401). */
  expireAccessTokens(): void;
  /** Refresh-token grants that succeeded. */
  refreshes(): number;
  requests: RecordedRequest[];
  /** Queues a fault for the next request of that kind. */
  fail(on: Target, fault: Fault): void;
  /** Moves the fake's clock forward. */
  advance(ms: number): void;
  close(): Promise<void>;
}

export interface FakeState<T extends string> {
  clock: Clock;
  now: () => number;
  recorder: Recorder;
  faults: FaultQueue<T>;
  tokens: TokenStore;
}

/** What every fake keeps: its clock, the requests, the planned faults and the tokens. */
export function createFakeState<T extends string>(now?: () => number): FakeState<T> {
  const clock = createClock(now);
  return { clock, now: clock.now, recorder: createRecorder(), faults: new FaultQueue<T>(), tokens: new TokenStore(clock.now) };
}

/** The members of `Fake` that are the kit's own wiring. */
export function fakeControls<T extends string>(
  app: FastifyInstance,
  state: FakeState<T>,
  consent: { refuseNextConsent: () => void },
): Pick<Fake<never, T>, 'refuseNextConsent' | 'expireAccessTokens' | 'requests' | 'fail' | 'advance' | 'close'> {
  return {
    refuseNextConsent: consent.refuseNextConsent,
    expireAccessTokens: () => state.tokens.kill((t) => t.kind === 'access'),
    requests: state.recorder.requests,
    fail: (on, fault) => state.faults.push(on, fault),
    advance: state.clock.advance,
    close: () => app.close(),
  };
}

// --- Clock -----------------------------------------------------------------------------------------

export interface Clock {
  now: () => number;
  advance: (ms: number) => void;
}

/** The fake's clock: the one given (Date.now by default) plus what `advance` added. */
function createClock(base?: () => number): Clock {
  let offsetMs = 0;
  return {
    now: () => (base?.() ?? Date.now()) + offsetMs,
    advance: (ms) => {
      offsetMs += ms;
    },
  };
}

// --- Tokens and codes ------------------------------------------------------------------------------

export interface IssuedToken {
  token: string;
  kind: 'access' | 'refresh';
  /** Whom it acts for: a user, channel or open id. */
  subject: string;
  /** The tokens of one consent and its refreshes share a grant. */
  grant: number;
  scope: string[];
  issuedAt: number;
  /** By the clock; Infinity when it does not expire. */
  expiresAt: number;
  dead: boolean;
}

export class TokenStore {
  readonly tokens = new Map<string, IssuedToken>();
  private readonly now: () => number;
  private grants = 0;

  constructor(now: () => number) {
    this.now = now;
  }

  /** Stores the token; a new grant unless one is given. */
  issue(kind: IssuedToken['kind'], token: string, options: { subject: string; scope: string[]; ttlMs?: number; grant?: number }): IssuedToken {
    const issuedAt = this.now();
    const issued: IssuedToken = {
      token,
      kind,
      subject: options.subject,
      grant: options.grant ?? ++this.grants,
      scope: options.scope,
      issuedAt,
      expiresAt: issuedAt + (options.ttlMs ?? Infinity),
      dead: false,
    };
    this.tokens.set(token, issued);
    return issued;
  }

  /** The token when it is of that kind, not revoked and not expired. */
  live(kind: IssuedToken['kind'], token: string | undefined): IssuedToken | undefined {
    const found = token === undefined ? undefined : this.tokens.get(token);
    return found === undefined || found.kind !== kind || found.dead || this.now() >= found.expiresAt ? undefined : found;
  }

  /** The live access token of `Authorization: Bearer <token>`. */
  bearer(req: FastifyRequest): IssuedToken | undefined {
    return this.live('access', bearerToken(req));
  }

  /** Kills the token named (whatever its state); what it was. */
  revoke(token: string): IssuedToken['kind'] | 'unknown' {
    const found = this.tokens.get(token);
    if (found === undefined) return 'unknown';
    found.dead = true;
    return found.kind;
  }

  kill(where: (token: IssuedToken) => boolean): void {
    for (const t of this.tokens.values()) if (where(t)) t.dead = true;
  }
}

/** Authorization codes: valid `ttlMs` after issue, and spent by any exchange that names them. */
export class CodeStore<C> {
  private readonly codes = new Map<string, { data: C; issuedAt: number }>();
  private readonly now: () => number;
  private readonly ttlMs: number;

  constructor(now: () => number, ttlMs: number) {
    this.now = now;
    this.ttlMs = ttlMs;
  }

  issue(code: string, data: C): void {
    this.codes.set(code, { data, issuedAt: this.now() });
  }

  /** The code's data when it is known and young enough; spent whatever the outcome. */
  redeem(code: string | undefined): C | undefined {
    if (code === undefined) return undefined;
    const found = this.codes.get(code);
    this.codes.delete(code);
    return found === undefined || this.now() - found.issuedAt > this.ttlMs ? undefined : found.data;
  }
}

export interface Revocation {
  token: string;
  /** What the token was: one of ours, or unknown (the platforms answer success all the same). */
  kind: 'access' | 'refresh' | 'unknown';
}

export interface HintedRevocation extends Revocation {
  tokenTypeHint: string | null;
}

export function bearerToken(req: FastifyRequest): string | undefined {
  return /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
}

/** Client credentials sent as `Authorization: Basic base64(id:secret)`; null when malformed, undefined when absent. */
export function basicCredentials(req: FastifyRequest): { id: string; secret: string } | null | undefined {
  const encoded = /^Basic (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
  if (encoded === undefined) return undefined;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? null : { id: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
}

/**
 * Whether `Authorization` is exactly `Basic base64(id:secret)`, byte for byte: the id and secret as
 * registered, what `curl --user id:secret` sends (Reddit's OAuth2 wiki: `curl --user
 * 'p-jcoLKBynTLew:gko_LXELoV07ZBNUXrvWZfzE3aI'`; X's docs: base64 of `client_id:client_secret`).
 * A form-encoded id or secret (`%2D` for `-`) is refused, as these platforms refuse it.
 */
export function basicClientMatches(req: FastifyRequest, clientId: string, clientSecret: string): boolean {
  return req.headers.authorization === `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
}

// --- The consent page ------------------------------------------------------------------------------

/** `Who` names the field that says who approved (`userId`, `channelId`, `openId`). */
export type Authorization<Who extends string = 'userId'> = {
  /** The consent page's query, as sent. */
  query: Record<string, string>;
  outcome: 'approved' | 'refused' | 'invalid';
  /** Why the consent page refused to go on (`invalid`). */
  reason: string | null;
} & { [K in Who]: string | null };

export interface ConsentPageConfig<Who extends string> {
  app: FastifyInstance;
  path: string;
  recorder: Recorder;
  who: Who;
  /** Whom the page approves as until `consentAs` says (the first account added). */
  firstSubject: () => string | undefined;
  /** null to go on; else why not, on an HTML error page (400), or back to redirect_uri with these parameters. */
  check: (query: Record<string, string>) => string | { reason: string; back: Record<string, string> } | null;
  errorPage: (reason: string) => string;
  /** The reason recorded and the page answered when no account was added. */
  nobody: { reason: string; page: string };
  /** The parameters back to redirect_uri when the user refuses, in order. */
  refused: (query: Record<string, string>) => Record<string, string>;
  /** Issues the code; the parameters back to redirect_uri, in order. */
  approved: (query: Record<string, string>, subject: string) => Record<string, string>;
}

export interface ConsentPage<Who extends string> {
  authorizations: Authorization<Who>[];
  /** The subject the page approves as from now on. */
  consentAs: (subject: string) => void;
  /** The next consent is refused. */
  refuseNextConsent: () => void;
}

/** The consent page: checks the request, then goes back to redirect_uri refused or approved (302). */
export function installConsentPage<Who extends string>(config: ConsentPageConfig<Who>): ConsentPage<Who> {
  const authorizations: Authorization<Who>[] = [];
  let consentSubject: string | null = null;
  let refuseNext = false;

  config.app.get(config.path, async (req, reply) => {
    config.recorder.record(req, null);
    const query = stringFields(req.query) as Record<string, string>;
    const log = (outcome: Authorization['outcome'], reason: string | null, subject: string | null) =>
      authorizations.push({ query, outcome, reason, [config.who]: subject } as Authorization<Who>);
    const page = (reason: string, html: string) => {
      log('invalid', reason, null);
      return reply.code(400).type('text/html').send(html);
    };
    const checked = config.check(query);
    if (typeof checked === 'string') return page(checked, config.errorPage(checked));
    const back = new URL(query.redirect_uri!);
    const redirect = (params: Record<string, string>) => {
      for (const [name, value] of Object.entries(params)) back.searchParams.set(name, value);
      return reply.redirect(back.href, 302);
    };
    if (checked !== null) {
      log('invalid', checked.reason, null);
      return redirect(checked.back);
    }
    if (refuseNext) {
      refuseNext = false;
      log('refused', null, null);
      return redirect(config.refused(query));
    }
    const subject = consentSubject ?? config.firstSubject();
    if (subject === undefined) return page(config.nobody.reason, config.nobody.page);
    const params = config.approved(query, subject);
    log('approved', null, subject);
    return redirect(params);
  });

  return {
    authorizations,
    consentAs: (subject) => {
      consentSubject = subject;
    },
    refuseNextConsent: () => {
      refuseNext = true;
    },
  };
}

/** `{state}` when the query has one (to spread into the parameters back). */
export function stateOf(query: Record<string, string>): Record<string, string> {
  return query.state === undefined ? {} : { state: query.state };
}

// --- Small things ----------------------------------------------------------------------------------

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A form or query object's string values (the first of repeated ones). */
export function stringFields(value: unknown): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  if (!isObject(value)) return out;
  for (const [name, v] of Object.entries(value)) {
    const first: unknown = Array.isArray(v) ? v[0] : v;
    if (typeof first === 'string') out[name] = first;
  }
  return out;
}

/** A request header's value (the first of repeated ones). */
export function header(req: FastifyRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function formDecode(value: string): string {
  try {
    return decodeURIComponent(value.replaceAll('+', ' '));
  } catch {
    return value;
  }
}

export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function base62(length: number): string {
  return [...randomBytes(length)].map((b) => ALPHANUMERIC[b % ALPHANUMERIC.length]).join('');
}

export function randomDigits(length: number): string {
  return [...randomBytes(length)].map((b) => String(b % 10)).join('');
}
