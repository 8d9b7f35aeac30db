import { randomBytes } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * An in-process LinkedIn (OAuth 2.0 and the versioned REST API), written from LinkedIn's documentation
 * and from what peers observed, for the calls Herald makes as a self-serve app ("Sign In with
 * LinkedIn using OpenID Connect" and "Share on LinkedIn"). Its origin stands in for both
 * https://www.linkedin.com and https://api.linkedin.com (paths unchanged):
 * - learn.microsoft.com/en-us/linkedin/shared/authentication/authorization-code-flow:
 *   GET /oauth/v2/authorization redirects to `redirect_uri?code&state`, or `?error=user_cancelled_authorize`
 *   when the member refuses, `?error=unauthorized_scope_error` for a scope the app lacks; the code
 *   lives 30 minutes and is used once; POST /oauth/v2/accessToken takes `client_id` and `client_secret`
 *   in the form body (HTTP Basic is not read), and answers `{access_token, expires_in: 5184000, scope,
 *   token_type, id_token}`, 401 `invalid_client`, 400 `invalid_request` for a bad or used code;
 * - /shared/authentication/programmatic-refresh-tokens: no refresh token for self-serve apps, so none here;
 * - /consumer/integrations/self-serve/share-on-linkedin and sign-in-with-linkedin-v2: GET /v2/userinfo
 *   `{sub, name, given_name, family_name, picture, email, email_verified, locale}`; the author is
 *   `urn:li:person:{sub}`;
 * - /marketing/versioning: every /rest/* call carries `LinkedIn-Version: YYYYMM` (400 `VERSION_MISSING`
 *   without it, 426 `NONEXISTENT_VERSION` for a version not active) and `X-Restli-Protocol-Version: 2.0.0`;
 * - /marketing/community-management/shares/images-api: POST /rest/images?action=initializeUpload, then
 *   one PUT of the whole file to `uploadUrl` with the Bearer token (201); GET /rest/images/{urn} is
 *   refused (403) to member tokens, as Postiz found;
 * - /marketing/community-management/shares/videos-api: initializeUpload answers `uploadInstructions`
 *   (inclusive byte ranges, one URL each); each part's PUT answers an `ETag`; finalizeUpload takes the
 *   ETags in part order; GET /rest/videos/{urn} shows WAITING_UPLOAD, PROCESSING, AVAILABLE or
 *   PROCESSING_FAILED;
 * - /marketing/community-management/shares/posts-api and multiimage-post-api: POST /rest/posts answers
 *   201 with an empty body and the post's URN in `x-restli-id`; one image or video in `content.media`,
 *   2 to 20 images in `content.multiImage`; 422 `ERROR :: /field :: field is required ...` (as seen in the
 *   n8n community thread); 422 `DUPLICATE_POST` naming the existing URN for the same commentary again
 *   (Arisamiga/Linkedin-RSS#5); 403 for an author not the token's member;
 * - /marketing/community-management/shares/little-text-format: the commentary is "little text"; LinkedIn
 *   shows it cut at the first unescaped reserved character (`| { } @ [ ] ( ) < > # * _ ~`), a
 *   backslash-escaped one shown without its backslash; mentions `@[Name](urn:li:person:…)` and hashtags
 *   `{hashtag|\#|word}` are shown as the name and `#word` (ComposioHQ/composio#2710, crossposter v1.1.5);
 * - /marketing/integrations/community-management/shares/comments-api: POST
 *   /rest/socialActions/{post URN}/comments `{actor, object, message: {text}}` answers 201 with the comment;
 * - /shared/api-guide/concepts/rate-limits: 429 carries no rate-limit headers and no Retry-After;
 * - 401 bodies: `serviceErrorCode` 65600 "Invalid access token" (expired), 65601 `REVOKED_ACCESS_TOKEN`,
 *   65604 `EMPTY_ACCESS_TOKEN` (xcarpentier/react-native-linkedin#80, jclusso/omniauth-linkedin-openid#6).
 * Wording of errors no source shows (unknown media, a wrong ETag order, a missing Rest.li header) is the fake's.
 * Faults a test plans are taken by the next matching request, in order.
 */

export interface LinkedInMember {
  /** The OpenID Connect subject: an opaque id. */
  sub: string;
  /** `urn:li:person:{sub}`. */
  urn: string;
  name: string;
  givenName: string;
  familyName: string;
  email: string;
}

export interface LinkedInAuthorization {
  clientId: string;
  redirectUri: string;
  state: string | null;
  scope: string;
  /** The member who answered the consent screen. */
  member: string;
  outcome: 'code' | 'refused';
  code: string | null;
  at: number;
}

export interface LinkedInRevocation {
  token: string;
  clientId: string;
  at: number;
}

export interface LinkedInToken {
  token: string;
  member: string;
  clientId: string;
  scope: string;
  issuedAt: number;
  expiresAt: number;
  /** `expired` by `expireTokens()` (its clock also expires it after 60 days), `revoked` by `revokeTokens()` or POST /oauth/v2/revoke. */
  state: 'active' | 'expired' | 'revoked';
}

export interface LinkedInImage {
  id: string;
  urn: string;
  owner: string;
  /** null until the PUT to the upload URL. */
  bytes: Buffer | null;
}

export type LinkedInVideoStatus = 'WAITING_UPLOAD' | 'PROCESSING' | 'AVAILABLE' | 'PROCESSING_FAILED';

export interface LinkedInVideo {
  id: string;
  urn: string;
  owner: string;
  fileSizeBytes: number;
  uploadToken: string;
  parts: { firstByte: number; lastByte: number; etag: string | null; bytes: Buffer | null }[];
  status: LinkedInVideoStatus;
  /** Status polls still answered PROCESSING once finalized. */
  pollsLeft: number;
  /** Ends in PROCESSING_FAILED instead of AVAILABLE. */
  fails: boolean;
}

export interface LinkedInPost {
  urn: string;
  author: string;
  /** As LinkedIn shows it (little text). */
  commentary: string;
  rawCommentary: string;
  content: unknown;
  /** By the fake's clock, epoch milliseconds. */
  createdAt: number;
}

export interface LinkedInComment {
  id: string;
  urn: string;
  /** The post's URN. */
  object: string;
  actor: string;
  /** As LinkedIn shows it (little text). */
  text: string;
  rawText: string;
  createdAt: number;
}

export interface LinkedInRecordedRequest {
  method: string;
  /** With its query string. */
  path: string;
  /** Lower-case names; Authorization keeps its scheme only (`Bearer <redacted>`). */
  headers: Record<string, string>;
  /** Parsed JSON, the text of a form or of JSON that did not parse, `{ bytes }` for an upload, null when empty. */
  body: unknown;
}

/**
 * Which requests a fault waits for. `images` and `videos` match any call of those APIs (upload PUTs
 * included); the narrower names match one step.
 */
export type LinkedInFaultTarget =
  'posts' | 'comments' | 'images' | 'imageUpload' | 'videos' | 'videoUpload' | 'videoFinalize' | 'videoStatus' | 'token' | 'revoke' | 'userinfo';

export type LinkedInFault =
  /** Answers without doing anything (a 429 gets LinkedIn's throttle body unless `body` is given). */
  | { kind: 'answer'; status: number; headers?: Record<string, string>; body?: unknown }
  /** Does the work (stores the post, ...), then answers this instead. */
  | { kind: 'commitThenAnswer'; status: number; headers?: Record<string, string>; body?: unknown }
  /** Does the work, then destroys the socket without answering. */
  | { kind: 'commitThenDrop' };

export interface LinkedInFakeOptions {
  clientId?: string;
  clientSecret?: string;
  /** `LinkedIn-Version` values answered; others get 426. */
  activeVersions?: string[];
  /** The fake's clock (epoch milliseconds): code and token expiry, createdAt. */
  now?: () => number;
  /** When given, `redirect_uri` must be one of these exactly. */
  redirectUris?: string[];
  /** The largest video part in `uploadInstructions` (default 4 MiB). */
  videoPartBytes?: number;
  /** Status polls answered PROCESSING after finalizeUpload (default 2). */
  videoPolls?: number;
}

export interface LinkedInFake {
  /** `http://127.0.0.1:PORT`, for both www.linkedin.com and api.linkedin.com. */
  url: string;
  clientId: string;
  clientSecret: string;
  addMember(member: { name: string; email?: string }): LinkedInMember;
  /** The member signed in at LinkedIn who answers the next consent screens (default: the last added). */
  consentAs(member: LinkedInMember): void;
  /** The next consent screen is refused (`user_cancelled_authorize`). */
  refuseNextConsent(): void;
  /** A token as the code exchange would give, without the browser round trip. */
  issueToken(member: LinkedInMember): string;
  /** Tokens issued so far (optionally only one member's) answer 401 65600 from now on. */
  expireTokens(member?: LinkedInMember): void;
  /** Tokens issued so far (optionally only one member's) answer 401 65601 REVOKED_ACCESS_TOKEN from now on. */
  revokeTokens(member?: LinkedInMember): void;
  authorizations: LinkedInAuthorization[];
  revocations: LinkedInRevocation[];
  tokens: Map<string, LinkedInToken>;
  images: Map<string, LinkedInImage>;
  videos: Map<string, LinkedInVideo>;
  /** In creation order. */
  posts: LinkedInPost[];
  comments: LinkedInComment[];
  requests: LinkedInRecordedRequest[];
  /** How video processing goes for videos finalized from now on. */
  videoProcessing: { polls: number; fails: boolean };
  /** Queues a fault for the next matching request. */
  fail(on: LinkedInFaultTarget, fault: LinkedInFault): void;
  close(): Promise<void>;
}

export const LINKEDIN_SCOPES = ['openid', 'profile', 'email', 'w_member_social'] as const;
const DEFAULT_VERSIONS = ['202605', '202606', '202607', '202608', '202609', '202610', '202611'];
const CODE_TTL_MS = 30 * 60_000;
const TOKEN_TTL_S = 5_184_000;
const MAX_COMMENTARY = 3000;
const RESERVED = new Set('|{}@[]()<>#*_~');
const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Marks a JSON body that did not parse, keeping its text for the record. */
class BadJson {
  constructor(readonly text: string) {}
}

type Json = Record<string, unknown>;

/** The commentary as LinkedIn shows it: cut at the first unescaped reserved character of little text. */
export function showLittleText(raw: string): string {
  let shown = '';
  for (let i = 0; i < raw.length; i += 1) {
    const c = raw.charAt(i);
    if (c === '\\') {
      const next = raw.charAt(i + 1);
      if (next !== '' && (RESERVED.has(next) || next === '\\')) {
        shown += next;
        i += 1;
      } else {
        shown += c;
      }
      continue;
    }
    if (RESERVED.has(c)) {
      const rest = raw.slice(i);
      const mention = /^@\[([^\]\\]*)\]\(urn:li:(?:person|organization):[^)\s]+\)/.exec(rest);
      if (mention !== null) {
        shown += mention[1] ?? '';
        i += mention[0].length - 1;
        continue;
      }
      const hashtag = /^\{hashtag\|\\#\|([^}|]+)\}/.exec(rest);
      if (hashtag !== null) {
        shown += `#${hashtag[1] ?? ''}`;
        i += hashtag[0].length - 1;
        continue;
      }
      break;
    }
    shown += c;
  }
  return shown;
}

export async function startLinkedInFake(options: LinkedInFakeOptions = {}): Promise<LinkedInFake> {
  const clientId = options.clientId ?? 'herald-linkedin-client';
  const clientSecret = options.clientSecret ?? 'herald-linkedin-secret';
  const activeVersions = options.activeVersions ?? DEFAULT_VERSIONS;
  const now = options.now ?? Date.now;
  const partBytes = options.videoPartBytes ?? 4 * 1024 * 1024;

  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 * 1024 });
  const members = new Map<string, LinkedInMember>();
  const codes = new Map<string, { clientId: string; redirectUri: string; member: string; scope: string; expiresAt: number; used: boolean }>();
  const tokens = new Map<string, LinkedInToken>();
  const authorizations: LinkedInAuthorization[] = [];
  const revocations: LinkedInRevocation[] = [];
  const images = new Map<string, LinkedInImage>();
  const videos = new Map<string, LinkedInVideo>();
  const posts: LinkedInPost[] = [];
  const comments: LinkedInComment[] = [];
  const requests: LinkedInRecordedRequest[] = [];
  const faults: { on: LinkedInFaultTarget; fault: LinkedInFault }[] = [];
  const videoProcessing = { polls: options.videoPolls ?? 2, fails: false };
  let consenting: LinkedInMember | undefined;
  let refuseNext = false;
  let serial = 0;
  let base = '';

  const opaque = (length: number) => [...randomBytes(length)].map((b) => ID_ALPHABET[b % ID_ALPHABET.length]).join('');
  const numericId = () => (7_400_000_000_000_000_000n + BigInt((serial += 1))).toString();

  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, null);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(null, new BadJson(text));
    }
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => done(null, String(body)));
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  const record = (req: FastifyRequest) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined) continue;
      const text = Array.isArray(value) ? value.join(', ') : value;
      headers[name] = name === 'authorization' ? `${text.split(' ')[0] ?? ''} <redacted>` : text;
    }
    const body: unknown = req.body;
    requests.push({
      method: req.method,
      path: req.url,
      headers,
      body: body === undefined || body === null ? null : Buffer.isBuffer(body) ? { bytes: body.length } : body instanceof BadJson ? body.text : body,
    });
  };

  const takeFault = (...on: LinkedInFaultTarget[]) => {
    const index = faults.findIndex((f) => on.includes(f.on));
    return index === -1 ? undefined : faults.splice(index, 1)[0]?.fault;
  };
  const answer = (reply: FastifyReply, fault: { status: number; headers?: Record<string, string>; body?: unknown }) => {
    const body =
      fault.body ??
      (fault.status === 429
        ? {
            status: 429,
            serviceErrorCode: 101,
            code: 'TOO_MANY_REQUESTS',
            message: 'Resource level throttle APPLICATION DAY limit for calls to this resource is reached.',
          }
        : fault.status === 401
          ? { serviceErrorCode: 65600, message: 'Invalid access token', status: 401 }
          : { message: STATUS_CODES[fault.status] ?? 'Error', status: fault.status });
    return reply
      .code(fault.status)
      .headers(fault.headers ?? {})
      .send(body);
  };
  /** After the work is done: the planned commit fault, or the normal answer. */
  const finish = (req: FastifyRequest, reply: FastifyReply, fault: LinkedInFault | undefined, send: () => FastifyReply) => {
    if (fault?.kind === 'commitThenDrop') {
      req.raw.socket.destroy();
      return reply;
    }
    if (fault?.kind === 'commitThenAnswer') return answer(reply, fault);
    return send();
  };
  const error = (reply: FastifyReply, status: number, body: Json) => reply.code(status).send(body);
  const required = (reply: FastifyReply, path: string) =>
    error(reply, 422, { message: `ERROR :: ${path} :: field is required but not found and has no default value`, status: 422 });
  const denied = (reply: FastifyReply, message: string) => error(reply, 403, { serviceErrorCode: 100, code: 'ACCESS_DENIED', message, status: 403 });
  const notFound = (reply: FastifyReply, message: string) => error(reply, 404, { message, status: 404 });
  const badRequest = (reply: FastifyReply, message: string) => error(reply, 400, { status: 400, code: 'ILLEGAL_ARGUMENT', message });
  const unprocessable = (reply: FastifyReply, message: string) => error(reply, 422, { message, status: 422 });

  /** The token's member, or undefined once a 401 is sent. */
  const bearer = (req: FastifyRequest, reply: FastifyReply) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (token === undefined) {
      void error(reply, 401, { status: 401, serviceErrorCode: 65604, code: 'EMPTY_ACCESS_TOKEN', message: 'Empty oauth2 access token' });
      return undefined;
    }
    const held = tokens.get(token);
    if (held?.state === 'revoked') {
      void error(reply, 401, {
        serviceErrorCode: 65601,
        code: 'REVOKED_ACCESS_TOKEN',
        message: 'The token used in the request has been revoked by the user',
        status: 401,
      });
      return undefined;
    }
    const member = held === undefined ? undefined : members.get(held.member);
    if (held === undefined || member === undefined || held.state === 'expired' || now() >= held.expiresAt) {
      void error(reply, 401, { serviceErrorCode: 65600, message: 'Invalid access token', status: 401 });
      return undefined;
    }
    return member;
  };
  const form = (req: FastifyRequest) => new URLSearchParams(typeof req.body === 'string' ? req.body : '');
  const json = (req: FastifyRequest): Json | undefined => (isObject(req.body) ? req.body : undefined);
  const issue = (member: LinkedInMember, client: string, scope: string) => {
    const token = `AQ${opaque(40)}`;
    const issuedAt = now();
    tokens.set(token, { token, member: member.sub, clientId: client, scope, issuedAt, expiresAt: issuedAt + TOKEN_TTL_S * 1000, state: 'active' });
    return token;
  };
  const idToken = (member: LinkedInMember, client: string) => {
    const seg = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const iat = Math.floor(now() / 1000);
    const claims = {
      iss: 'https://www.linkedin.com/oauth',
      aud: client,
      iat,
      exp: iat + 3600,
      sub: member.sub,
      name: member.name,
      given_name: member.givenName,
      family_name: member.familyName,
      picture: picture(member),
      email: member.email,
      email_verified: true,
      locale: 'en_US',
    };
    return `${seg({ alg: 'RS256', kid: 'fake-linkedin', typ: 'JWT' })}.${seg(claims)}.${randomBytes(32).toString('base64url')}`;
  };
  const picture = (member: LinkedInMember) => `${base}/media/profile/${member.sub}.jpg`;
  const clientOk = (params: URLSearchParams) => params.get('client_id') === clientId && params.get('client_secret') === clientSecret;

  app.addHook('preHandler', async (req, reply) => {
    record(req);
    if (!req.url.startsWith('/rest/')) return;
    const version = req.headers['linkedin-version'];
    if (typeof version !== 'string' || version === '') {
      return error(reply, 400, {
        status: 400,
        code: 'VERSION_MISSING',
        message: 'A version must be present. Please specify a version by adding the LinkedIn-Version header.',
      });
    }
    const month = /^(\d{6})(?:\.\d{2})?$/.exec(version)?.[1];
    if (month === undefined || !activeVersions.includes(month)) {
      return error(reply, 426, { status: 426, code: 'NONEXISTENT_VERSION', message: `Requested version ${version} is not active` });
    }
    if (req.headers['x-restli-protocol-version'] !== '2.0.0') {
      return badRequest(reply, 'The header X-Restli-Protocol-Version: 2.0.0 is required by this API');
    }
    if (req.body instanceof BadJson) return badRequest(reply, 'Request body could not be converted to data map');
  });
  // The preHandler hook above runs (and records) for unknown routes too.
  app.setNotFoundHandler(async (req, reply) => {
    return notFound(reply, `No route for ${req.method} ${req.url.split('?')[0] ?? ''}`);
  });

  // OAuth 2.0 (www.linkedin.com)

  app.get<{ Querystring: Record<string, string | undefined> }>('/oauth/v2/authorization', async (req, reply) => {
    const { response_type: responseType, client_id: client, redirect_uri: redirectUri, state, scope } = req.query;
    const page = (message: string) => reply.code(400).type('text/plain').send(`LinkedIn (fake): ${message}`);
    if (responseType !== 'code') return page('response_type must be code');
    if (client !== clientId) return page(`invalid client_id ${client ?? '(none)'}`);
    if (redirectUri === undefined || !/^https?:\/\/[^#]+$/.test(redirectUri)) return page('redirect_uri must be an absolute URL without a fragment');
    if (options.redirectUris !== undefined && !options.redirectUris.includes(redirectUri)) return page('The redirect_uri does not match the registered value');
    const back = (params: Record<string, string>) => {
      const target = new URL(redirectUri);
      for (const [name, value] of Object.entries(params)) target.searchParams.set(name, value);
      if (state !== undefined) target.searchParams.set('state', state);
      return reply.redirect(target.toString(), 302);
    };
    const scopes = (scope ?? '').split(' ').filter((s) => s !== '');
    const unknown = scopes.find((s) => !(LINKEDIN_SCOPES as readonly string[]).includes(s));
    if (unknown !== undefined)
      return back({ error: 'unauthorized_scope_error', error_description: `Scope "${unknown}" is not authorized for your application` });
    const missing = LINKEDIN_SCOPES.filter((s) => !scopes.includes(s));
    if (missing.length > 0) return page(`scope must include ${LINKEDIN_SCOPES.join(' ')} (space-separated); missing ${missing.join(' ')}`);
    const member = consenting ?? [...members.values()].at(-1);
    if (member === undefined) return page('no member is signed in (addMember first)');
    const at = now();
    if (refuseNext) {
      refuseNext = false;
      authorizations.push({ clientId: client, redirectUri, state: state ?? null, scope: scope ?? '', member: member.sub, outcome: 'refused', code: null, at });
      return back({ error: 'user_cancelled_authorize', error_description: 'The user cancelled the authorization' });
    }
    const code = `AQ${opaque(60)}`;
    codes.set(code, { clientId: client, redirectUri, member: member.sub, scope: scopes.join(' '), expiresAt: at + CODE_TTL_MS, used: false });
    authorizations.push({ clientId: client, redirectUri, state: state ?? null, scope: scope ?? '', member: member.sub, outcome: 'code', code, at });
    return back({ code });
  });

  app.post('/oauth/v2/accessToken', async (req, reply) => {
    const fault = takeFault('token');
    if (fault?.kind === 'answer') return answer(reply, fault);
    const params = form(req);
    const grantType = params.get('grant_type');
    if (grantType === null) return error(reply, 400, { error: 'invalid_request', error_description: 'A required parameter "grant_type" is missing' });
    if (!clientOk(params)) return error(reply, 401, { error: 'invalid_client', error_description: 'Client authentication failed' });
    if (grantType !== 'authorization_code')
      return error(reply, 400, { error: 'unsupported_grant_type', error_description: `Grant type ${grantType} is not supported for this application` });
    const held = codes.get(params.get('code') ?? '');
    const member = held === undefined ? undefined : members.get(held.member);
    if (
      held === undefined ||
      member === undefined ||
      held.used ||
      now() >= held.expiresAt ||
      held.clientId !== clientId ||
      held.redirectUri !== params.get('redirect_uri')
    ) {
      return error(reply, 400, {
        error: 'invalid_request',
        error_description:
          'Unable to retrieve access token: appid/redirect uri/code verifier does not match authorization code. Or authorization code expired. Or external member binding exists',
      });
    }
    held.used = true;
    const token = issue(member, clientId, held.scope);
    return finish(req, reply, fault, () =>
      reply.send({
        access_token: token,
        expires_in: TOKEN_TTL_S,
        scope: held.scope.split(' ').sort().join(','),
        token_type: 'Bearer',
        id_token: idToken(member, clientId),
      }),
    );
  });

  app.post('/oauth/v2/revoke', async (req, reply) => {
    const fault = takeFault('revoke');
    if (fault?.kind === 'answer') return answer(reply, fault);
    const params = form(req);
    if (!clientOk(params)) return error(reply, 401, { error: 'invalid_client', error_description: 'Client authentication failed' });
    const token = params.get('token');
    if (token === null || token === '') return error(reply, 400, { error: 'invalid_request', error_description: 'A required parameter "token" is missing' });
    revocations.push({ token, clientId, at: now() });
    const held = tokens.get(token);
    if (held !== undefined) held.state = 'revoked';
    return finish(req, reply, fault, () => reply.code(200).send());
  });

  // Unversioned API (api.linkedin.com/v2)

  app.get('/v2/userinfo', async (req, reply) => {
    const member = bearer(req, reply);
    if (member === undefined) return reply;
    const fault = takeFault('userinfo');
    if (fault?.kind === 'answer') return answer(reply, fault);
    return finish(req, reply, fault, () =>
      reply.send({
        sub: member.sub,
        email_verified: true,
        name: member.name,
        locale: { country: 'US', language: 'en' },
        given_name: member.givenName,
        family_name: member.familyName,
        email: member.email,
        picture: picture(member),
      }),
    );
  });

  // Images API

  app.post<{ Querystring: { action?: string } }>('/rest/images', async (req, reply) => {
    const member = bearer(req, reply);
    if (member === undefined) return reply;
    const fault = takeFault('images');
    if (fault?.kind === 'answer') return answer(reply, fault);
    if (req.query.action !== 'initializeUpload') return badRequest(reply, `Unsupported action ${req.query.action ?? '(none)'}`);
    const request = json(req)?.initializeUploadRequest;
    if (!isObject(request)) return required(reply, '/initializeUploadRequest');
    if (typeof request.owner !== 'string') return required(reply, '/initializeUploadRequest/owner');
    if (request.owner !== member.urn) return denied(reply, `Not enough permissions to upload images for ${request.owner}`);
    const id = `D4E10AQ${opaque(14)}`;
    const image: LinkedInImage = { id, urn: `urn:li:image:${id}`, owner: member.urn, bytes: null };
    images.set(id, image);
    return finish(req, reply, fault, () =>
      reply.send({ value: { uploadUrlExpiresAt: now() + 24 * 3_600_000, uploadUrl: `${base}/upload/image/${id}`, image: image.urn } }),
    );
  });

  app.put<{ Params: { id: string } }>('/upload/image/:id', async (req, reply) => {
    const member = bearer(req, reply);
    if (member === undefined) return reply;
    const fault = takeFault('imageUpload', 'images');
    if (fault?.kind === 'answer') return answer(reply, fault);
    const image = images.get(req.params.id);
    if (image === undefined) return notFound(reply, 'Unknown upload URL');
    if (image.owner !== member.urn) return denied(reply, 'The upload URL belongs to another member');
    if (!Buffer.isBuffer(req.body) || req.body.length === 0) return badRequest(reply, 'The upload has no bytes');
    image.bytes = req.body;
    return finish(req, reply, fault, () => reply.code(201).send());
  });

  app.get<{ Params: { urn: string } }>('/rest/images/:urn', async (req, reply) => {
    const member = bearer(req, reply);
    if (member === undefined) return reply;
    const fault = takeFault('images');
    if (fault?.kind === 'answer') return answer(reply, fault);
    const version = String(req.headers['linkedin-version']);
    return finish(req, reply, fault, () => denied(reply, `Not enough permissions to access: images.GET.${version}`));
  });

  // Videos API

  app.post<{ Querystring: { action?: string } }>('/rest/videos', async (req, reply) => {
    const member = bearer(req, reply);
    if (member === undefined) return reply;
    const action = req.query.action;
    const fault = action === 'finalizeUpload' ? takeFault('videoFinalize', 'videos') : takeFault('videos');
    if (fault?.kind === 'answer') return answer(reply, fault);

    if (action === 'initializeUpload') {
      const request = json(req)?.initializeUploadRequest;
      if (!isObject(request)) return required(reply, '/initializeUploadRequest');
      if (typeof request.owner !== 'string') return required(reply, '/initializeUploadRequest/owner');
      if (request.fileSizeBytes === undefined) return required(reply, '/initializeUploadRequest/fileSizeBytes');
      const size = request.fileSizeBytes;
      if (typeof size !== 'number' || !Number.isSafeInteger(size) || size <= 0)
        return unprocessable(reply, 'ERROR :: /initializeUploadRequest/fileSizeBytes :: must be a positive integer');
      if (request.owner !== member.urn) return denied(reply, `Not enough permissions to upload videos for ${request.owner}`);
      const id = `D5D10AQ${opaque(14)}`;
      const parts: LinkedInVideo['parts'] = [];
      for (let first = 0; first < size; first += partBytes)
        parts.push({ firstByte: first, lastByte: Math.min(size, first + partBytes) - 1, etag: null, bytes: null });
      const video: LinkedInVideo = {
        id,
        urn: `urn:li:video:${id}`,
        owner: member.urn,
        fileSizeBytes: size,
        uploadToken: opaque(24),
        parts,
        status: 'WAITING_UPLOAD',
        pollsLeft: 0,
        fails: false,
      };
      videos.set(id, video);
      return finish(req, reply, fault, () =>
        reply.send({
          value: {
            uploadUrlsExpireAt: now() + 24 * 3_600_000,
            video: video.urn,
            uploadInstructions: parts.map((p, index) => ({ uploadUrl: `${base}/upload/video/${id}/${index}`, firstByte: p.firstByte, lastByte: p.lastByte })),
            uploadToken: video.uploadToken,
          },
        }),
      );
    }

    if (action === 'finalizeUpload') {
      const request = json(req)?.finalizeUploadRequest;
      if (!isObject(request)) return required(reply, '/finalizeUploadRequest');
      if (typeof request.video !== 'string') return required(reply, '/finalizeUploadRequest/video');
      if (!Array.isArray(request.uploadedPartIds)) return required(reply, '/finalizeUploadRequest/uploadedPartIds');
      const video = videoByUrn(request.video);
      if (video === undefined) return notFound(reply, `Video ${request.video} not found`);
      if (video.owner !== member.urn) return denied(reply, `Not enough permissions to finalize ${video.urn}`);
      if (video.status !== 'WAITING_UPLOAD') return badRequest(reply, `Video ${video.urn} was already finalized`);
      if (request.uploadToken !== video.uploadToken) return badRequest(reply, 'The upload token does not match the video');
      const missing = video.parts.findIndex((p) => p.etag === null);
      if (missing !== -1) return badRequest(reply, `Part ${missing} of ${video.urn} was not uploaded`);
      const expected = video.parts.map((p) => p.etag);
      const given: unknown[] = request.uploadedPartIds;
      if (given.length !== expected.length || given.some((etag, i) => etag !== expected[i])) {
        return badRequest(reply, 'uploadedPartIds must list the ETag of every part, in part order');
      }
      video.pollsLeft = videoProcessing.polls;
      video.fails = videoProcessing.fails;
      video.status = video.pollsLeft > 0 ? 'PROCESSING' : video.fails ? 'PROCESSING_FAILED' : 'AVAILABLE';
      return finish(req, reply, fault, () => reply.code(200).send());
    }

    return badRequest(reply, `Unsupported action ${action ?? '(none)'}`);
  });

  app.put<{ Params: { id: string; part: string } }>('/upload/video/:id/:part', async (req, reply) => {
    // Video upload URLs are presigned: the docs' PUT carries no Authorization.
    const fault = takeFault('videoUpload', 'videos');
    if (fault?.kind === 'answer') return answer(reply, fault);
    const video = videos.get(req.params.id);
    const part = video?.parts[Number(req.params.part)];
    if (video === undefined || part === undefined || !/^\d+$/.test(req.params.part)) return notFound(reply, 'Unknown upload URL');
    if (video.status !== 'WAITING_UPLOAD') return badRequest(reply, `Video ${video.urn} was already finalized`);
    const length = Buffer.isBuffer(req.body) ? req.body.length : 0;
    const expected = part.lastByte - part.firstByte + 1;
    if (!Buffer.isBuffer(req.body) || length !== expected) {
      return badRequest(reply, `Part ${req.params.part} takes bytes ${part.firstByte}-${part.lastByte} (${expected} bytes); got ${length}`);
    }
    part.bytes = req.body;
    part.etag = `/ambry-video/signedBlob/${opaque(32)}`;
    const etag = part.etag;
    return finish(req, reply, fault, () => reply.code(200).header('etag', etag).send());
  });

  app.get<{ Params: { urn: string } }>('/rest/videos/:urn', async (req, reply) => {
    const member = bearer(req, reply);
    if (member === undefined) return reply;
    const fault = takeFault('videoStatus', 'videos');
    if (fault?.kind === 'answer') return answer(reply, fault);
    const video = videoByUrn(req.params.urn);
    if (video === undefined) return notFound(reply, `Video ${req.params.urn} not found`);
    if (video.owner !== member.urn) return denied(reply, `Not enough permissions to access ${video.urn}`);
    if (video.status === 'PROCESSING') {
      if (video.pollsLeft > 0) video.pollsLeft -= 1;
      else video.status = video.fails ? 'PROCESSING_FAILED' : 'AVAILABLE';
    }
    const status = video.status;
    return finish(req, reply, fault, () =>
      reply.send({
        id: video.urn,
        owner: video.owner,
        status,
        ...(status === 'AVAILABLE' ? { downloadUrl: `${base}/media/video/${video.id}`, downloadUrlExpiresAt: now() + 3_600_000, duration: 0 } : {}),
        ...(status === 'PROCESSING_FAILED' ? { processingFailureReason: 'Video processing failed' } : {}),
      }),
    );
  });

  // Posts API

  app.post('/rest/posts', async (req, reply) => {
    const member = bearer(req, reply);
    if (member === undefined) return reply;
    const fault = takeFault('posts');
    if (fault?.kind === 'answer') return answer(reply, fault);
    const body = json(req);
    if (body === undefined) return badRequest(reply, 'Request body could not be converted to data map');
    for (const field of ['author', 'commentary', 'visibility', 'distribution', 'lifecycleState']) {
      if (body[field] === undefined) return required(reply, `/${field}`);
    }
    const distribution = body.distribution;
    if (!isObject(distribution) || distribution.feedDistribution === undefined) return required(reply, '/distribution/feedDistribution');
    for (const [path, value, allowed] of [
      ['/visibility', body.visibility, ['PUBLIC', 'CONNECTIONS', 'LOGGED_IN', 'CONTAINER']],
      ['/lifecycleState', body.lifecycleState, ['PUBLISHED', 'DRAFT', 'PUBLISH_REQUESTED', 'PUBLISH_FAILED']],
      ['/distribution/feedDistribution', distribution.feedDistribution, ['MAIN_FEED', 'NONE']],
    ] as const) {
      if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value))
        return unprocessable(reply, `ERROR :: ${path} :: ${JSON.stringify(value)} is not an enum symbol`);
    }
    const { author, commentary } = body;
    if (typeof author !== 'string') return unprocessable(reply, 'ERROR :: /author :: expected a URN string');
    if (typeof commentary !== 'string') return unprocessable(reply, 'ERROR :: /commentary :: expected a string');
    if (author !== member.urn) return denied(reply, 'Unpermitted fields present in REQUEST_BODY: Data Processing Exception while processing fields [/author]');
    if ([...commentary].length > MAX_COMMENTARY)
      return unprocessable(reply, `ERROR :: /commentary :: length ${[...commentary].length} exceeds the maximum of ${MAX_COMMENTARY}`);
    const problem = contentProblem(body.content, author);
    if (problem !== undefined) return unprocessable(reply, problem);
    const duplicate = commentary === '' ? undefined : posts.find((p) => p.author === author && p.rawCommentary === commentary);
    if (duplicate !== undefined) {
      return error(reply, 422, {
        message: `Content is a duplicate of ${duplicate.urn}`,
        errorDetails: { inputErrors: [{ description: 'Duplicate post is detected', code: 'DUPLICATE_POST' }] },
        status: 422,
      });
    }
    const post: LinkedInPost = {
      urn: `urn:li:share:${numericId()}`,
      author,
      commentary: showLittleText(commentary),
      rawCommentary: commentary,
      content: body.content ?? null,
      createdAt: now(),
    };
    posts.push(post);
    return finish(req, reply, fault, () => reply.code(201).header('x-restli-id', post.urn).send());
  });

  // A member token cannot read posts (r_member_social is restricted), its own included.
  app.get('/rest/posts', async (req, reply) => {
    if (bearer(req, reply) === undefined) return reply;
    return denied(reply, `Not enough permissions to access: partnerApiPostsExternal.FINDER-author.${String(req.headers['linkedin-version'])}`);
  });
  app.get('/rest/posts/:urn', async (req, reply) => {
    if (bearer(req, reply) === undefined) return reply;
    return denied(reply, `Not enough permissions to access: partnerApiPostsExternal.GET.${String(req.headers['linkedin-version'])}`);
  });

  // Comments API

  app.post<{ Params: { urn: string } }>('/rest/socialActions/:urn/comments', async (req, reply) => {
    const member = bearer(req, reply);
    if (member === undefined) return reply;
    const fault = takeFault('comments');
    if (fault?.kind === 'answer') return answer(reply, fault);
    const postUrn = req.params.urn;
    if (!posts.some((p) => p.urn === postUrn)) return notFound(reply, `Entity ${postUrn} not found`);
    const body = json(req);
    if (body === undefined) return badRequest(reply, 'Request body could not be converted to data map');
    if (body.actor === undefined) return required(reply, '/actor');
    if (body.object === undefined) return required(reply, '/object');
    const message = body.message;
    if (!isObject(message) || typeof message.text !== 'string') return required(reply, '/message/text');
    if (body.actor !== member.urn)
      return denied(reply, 'Unpermitted fields present in REQUEST_BODY: Data Processing Exception while processing fields [/actor]');
    if (body.object !== postUrn) return unprocessable(reply, `ERROR :: /object :: must be the URN in the path, ${postUrn}`);
    const id = numericId();
    const createdAt = now();
    const comment: LinkedInComment = {
      id,
      urn: `urn:li:comment:(${postUrn},${id})`,
      object: postUrn,
      actor: member.urn,
      text: showLittleText(message.text),
      rawText: message.text,
      createdAt,
    };
    comments.push(comment);
    return finish(req, reply, fault, () =>
      reply
        .code(201)
        .header('x-restli-id', comment.id)
        .send({
          actor: comment.actor,
          commentUrn: comment.urn,
          created: { actor: comment.actor, time: createdAt },
          lastModified: { actor: comment.actor, time: createdAt },
          id: comment.id,
          message: { text: comment.text, attributes: [] },
          object: comment.object,
          $URN: comment.urn,
        }),
    );
  });

  function videoByUrn(urn: string) {
    const id = /^urn:li:video:(.+)$/.exec(urn)?.[1];
    return id === undefined ? undefined : videos.get(id);
  }

  /** Why `content` cannot be posted by `author`, or undefined when it can. */
  function contentProblem(content: unknown, author: string): string | undefined {
    if (content === undefined || content === null) return undefined;
    if (!isObject(content)) return 'ERROR :: /content :: expected a record';
    const kinds = Object.keys(content);
    if (kinds.length !== 1) return `ERROR :: /content :: exactly one kind of content is allowed, got ${kinds.join(', ') || 'none'}`;
    const image = (path: string, id: unknown): string | undefined => {
      const found = typeof id === 'string' ? images.get(/^urn:li:image:(.+)$/.exec(id)?.[1] ?? '') : undefined;
      if (typeof id !== 'string') return `ERROR :: ${path}/id :: field is required but not found and has no default value`;
      if (found === undefined || found.owner !== author) return `ERROR :: ${path}/id :: image ${id} does not exist`;
      if (found.bytes === null) return `ERROR :: ${path}/id :: image ${id} was not uploaded`;
      return undefined;
    };
    if (isObject(content.media)) {
      const id = content.media.id;
      if (typeof id === 'string' && id.startsWith('urn:li:video:')) {
        const video = videoByUrn(id);
        if (video === undefined || video.owner !== author) return `ERROR :: /content/media/id :: video ${id} does not exist`;
        if (video.status !== 'AVAILABLE') return `ERROR :: /content/media/id :: video ${id} is ${video.status}, not AVAILABLE`;
        return undefined;
      }
      return image('/content/media', id);
    }
    if (isObject(content.multiImage)) {
      const list = content.multiImage.images;
      if (!Array.isArray(list)) return 'ERROR :: /content/multiImage/images :: field is required but not found and has no default value';
      const entries: unknown[] = list;
      if (entries.length < 2 || entries.length > 20)
        return `ERROR :: /content/multiImage/images :: a multi-image post takes 2 to 20 images, got ${entries.length}`;
      for (const [i, entry] of entries.entries()) {
        const problem = image(`/content/multiImage/images/${i}`, isObject(entry) ? entry.id : undefined);
        if (problem !== undefined) return problem;
      }
      return undefined;
    }
    return `ERROR :: /content :: unsupported content ${kinds.join(', ')} (the fake takes media and multiImage)`;
  }

  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;

  return {
    url: base,
    clientId,
    clientSecret,
    addMember({ name, email }) {
      const sub = opaque(10);
      const [givenName = name, ...rest] = name.split(' ');
      const member: LinkedInMember = {
        sub,
        urn: `urn:li:person:${sub}`,
        name,
        givenName,
        familyName: rest.join(' '),
        email:
          email ??
          `${
            name
              .toLowerCase()
              .replace(/[^a-z0-9]+/g, '.')
              .replace(/^\.|\.$/g, '') || sub
          }@example.test`,
      };
      members.set(sub, member);
      return member;
    },
    consentAs(member) {
      consenting = member;
    },
    refuseNextConsent() {
      refuseNext = true;
    },
    issueToken(member) {
      if (!members.has(member.sub)) throw new Error(`no member ${member.sub}`);
      return issue(member, clientId, LINKEDIN_SCOPES.join(' '));
    },
    expireTokens(member) {
      for (const t of tokens.values()) if (t.state === 'active' && (member === undefined || t.member === member.sub)) t.state = 'expired';
    },
    revokeTokens(member) {
      for (const t of tokens.values()) if (t.state !== 'revoked' && (member === undefined || t.member === member.sub)) t.state = 'revoked';
    },
    authorizations,
    revocations,
    tokens,
    images,
    videos,
    posts,
    comments,
    requests,
    videoProcessing,
    fail: (on, fault) => faults.push({ on, fault }),
    close: () => app.close(),
  };
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value) && !(value instanceof BadJson);
}
