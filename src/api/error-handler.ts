import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/connection-errors.js';
import type { ErrorDetail } from '../domain/api-types.js';
import { DomainError, errorName, INVALID_REQUEST, type DomainErrorKind } from '../domain/errors.js';
import { ProbeUnavailable } from '../domain/ports/media-probe.js';
import { HttpError } from './http-error.js';
import { KeptAnswer, sendKeptAnswer } from './idempotency.js';
import { RATE_LIMIT_EXCEEDED, type UnroutedLimit } from './rate-limits.js';
import { acceptedContentTypes, unsupportedContentType } from './route-options.js';
import { capDetails, toErrorDetails } from './validation-details.js';

const STATUS_OF: Record<DomainErrorKind, number> = {
  invalid_request: 400,
  platform_limit: 400,
  not_allowed: 400,
  unusable_file: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  too_large: 413,
  range_not_satisfiable: 416,
  platform_unreachable: 502,
  // Like the database: a part of the server failed, not the request; send() adds Retry-After.
  storage_unavailable: 503,
};

const NOT_FOUND: ErrorBody = { error: 'Not found', code: 'not_found' };
const INTERNAL_ERROR: ErrorBody = { error: 'Internal server error', code: 'internal_error' };
const RATE_LIMITED: ErrorBody = { error: RATE_LIMIT_EXCEEDED, code: 'rate_limited' };

/** Seconds a client should wait before retrying a 503. */
const RETRY_AFTER_SECONDS = 5;

interface ErrorBody {
  error: string;
  /** What happened, for clients to match on: the message is for people. */
  code: string;
  details?: ErrorDetail[];
  detailsOmitted?: number;
}

interface Answer {
  status: number;
  body: ErrorBody;
  retryAfterSeconds?: number;
}

/**
 * Every failure leaves in the interface's error shape: `{"error": "..."}`, plus `details` for
 * validation. Messages come from this table, DomainErrors or HttpErrors, never from the failure
 * itself, so no SQL, stack or secret reaches a client.
 */
export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (err instanceof KeptAnswer) return sendKeptAnswer(reply, err);
    // The client hung up mid-request (an upload cut short): nobody to answer, and nothing failed here.
    if (req.raw.socket?.destroyed === true) {
      req.log.info({ errorName: errorName(err), operation: req.routeOptions.url }, 'the client closed the connection before the answer');
      return send(reply, { status: 400, body: { error: 'Request aborted by the client', code: 'request_aborted' } });
    }
    const answer = answerFor(err, req);
    if (answer.status >= 500) logFailure(req, securityFailureCause(err) ?? err, answer.status);
    return send(reply, answer);
  });
  app.setNotFoundHandler((_req, reply) => send(reply, { status: 404, body: NOT_FOUND }));
}

function answerFor(err: FastifyError, req: FastifyRequest): Answer {
  if (err.validation) {
    const root = partOf(req, err.validationContext);
    return { status: 400, body: { error: INVALID_REQUEST, code: 'invalid_request', ...toErrorDetails(err.validation as never, root) } };
  }
  const cause = securityFailureCause(err) ?? err;
  // A failed key from an address that has used its guesses (see rate-limits): told to wait, not which check failed.
  if (req.heraldGuessesSpentFor !== undefined) return { status: 429, body: RATE_LIMITED, retryAfterSeconds: req.heraldGuessesSpentFor };
  if (cause instanceof DomainError) {
    const body: ErrorBody = cause.details
      ? { error: cause.message, code: cause.code, ...capDetails(cause.details) }
      : { error: cause.message, code: cause.code };
    return { status: STATUS_OF[cause.kind], body };
  }
  if (cause instanceof HttpError) return { status: cause.status, body: { error: cause.message, code: cause.code }, retryAfterSeconds: cause.retryAfterSeconds };
  if (isDatabaseUnavailable(cause)) return { status: 503, body: { error: 'Database not available', code: 'database_unavailable' } };
  // Like the database: a part of the server, not the request, failed; the upload was not judged and nothing was kept.
  if (cause instanceof ProbeUnavailable) return { status: 503, body: { error: cause.message, code: 'probe_unavailable' } };
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { status: 400, body: { error: 'Request body is not valid JSON', code: 'invalid_json' } };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, body: { error: 'Request body too large', code: 'body_too_large' } };
    // An upload sent without any content type reaches the multipart reader, which refuses it.
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, body: { error: unsupportedContentType(acceptedContentTypes(req)), code: 'unsupported_content_type' } };
  }
  return { status: 500, body: INTERNAL_ERROR };
}

/** glue wraps what a security handler threw; the last handler's error is the one that decides. */
function securityFailureCause(err: FastifyError): unknown {
  const errors = (err as { errors?: unknown }).errors;
  if (err.name === 'Unauthorized' && Array.isArray(errors) && errors.length > 0) return errors[errors.length - 1];
  return undefined;
}

function partOf(req: FastifyRequest, context: FastifyError['validationContext']): unknown {
  switch (context) {
    case 'querystring':
      return req.query;
    case 'params':
      return req.params;
    case 'headers':
      return req.headers;
    case 'body':
    case undefined:
      return req.body;
  }
}

/**
 * Fastify's own failures before routing (Fastify's `frameworkErrors` option). A path parameter whose
 * percent-encoding is not valid UTF-8 cannot name any resource, so it is answered like one that is
 * not there, in the interface's error shape rather than Fastify's.
 */
export async function answerFrameworkError(err: FastifyError, req: FastifyRequest, reply: FastifyReply, limit: UnroutedLimit | undefined): Promise<void> {
  const waitSeconds = await limit?.(req, reply);
  const answer: Answer =
    waitSeconds !== undefined
      ? { status: 429, body: RATE_LIMITED, retryAfterSeconds: waitSeconds }
      : // A path that is not UTF-8 once decoded, or an id longer than any id can be: nothing is there.
        err.code === 'FST_ERR_BAD_URL' || err.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? { status: 404, body: NOT_FOUND }
        : { status: 500, body: INTERNAL_ERROR };
  send(reply, answer);
}

function send(reply: FastifyReply, { status, body, retryAfterSeconds }: Answer): FastifyReply {
  if (status === 401) reply.header('WWW-Authenticate', 'Bearer');
  if (retryAfterSeconds !== undefined) reply.header('Retry-After', String(retryAfterSeconds));
  else if (status === 503) reply.header('Retry-After', String(RETRY_AFTER_SECONDS));
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}

/** Name and code only: messages of unexpected errors can carry SQL or data, stacks carry paths. */
function logFailure(req: FastifyRequest, err: unknown, status: number): void {
  const { name, code } = err as { name?: unknown; code?: unknown };
  const errorCode = typeof code === 'string' ? code : undefined;
  req.log.error({ status, errorName: typeof name === 'string' ? name : typeof err, errorCode, operation: req.routeOptions.url }, 'request failed');
}

/** What Node's HTTP parser refused before Fastify saw a request, in the interface's error shape. */
const CLIENT_ERRORS: Record<string, { status: number; reason: string; error: string; code: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    reason: 'Request Header Fields Too Large',
    error: 'Request headers too large: at most 16 KiB in all',
    code: 'headers_too_large',
  },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, reason: 'Request Timeout', error: 'Request timeout', code: 'request_timeout' },
};
const MALFORMED = { status: 400, reason: 'Bad Request', error: 'Malformed HTTP request', code: 'malformed_request' };

/**
 * Fastify's clientErrorHandler: answers what the HTTP parser refused (headers too large, a request
 * that is not HTTP) as `{"error": ...}` like every other answer, then closes the connection.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  // A connection reset leaves nobody to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, reason, error, code } = CLIENT_ERRORS[err.code ?? ''] ?? MALFORMED;
  const body = JSON.stringify({ error, code });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
