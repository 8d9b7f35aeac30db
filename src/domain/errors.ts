import type { ErrorDetail } from './api-types.js';

/**
 * The closed set of failures the product itself reports. The HTTP layer maps each kind to a status;
 * the message is always safe to show the caller.
 */
export type DomainErrorKind =
  | 'invalid_request' // 400 with details
  | 'platform_limit' // 400
  | 'not_allowed' // 400: the resource is in a state that forbids the action
  | 'unusable_file' // 400: an upload of a type we do not take, or truncated or corrupt
  | 'unauthorized' // 401
  | 'forbidden' // 403
  | 'not_found' // 404
  | 'too_large' // 413
  | 'range_not_satisfiable' // 416: a byte range that starts past the end of a file
  | 'platform_unreachable' // 502: a platform did not answer a call made for the request
  | 'storage_unavailable'; // 503: the media store failed a call (unreachable, timed out, or answering errors)

/** The machine-readable code of each kind, where the kind alone says what happened (the others name it at the throw). */
const DEFAULT_CODES: Record<DomainErrorKind, string> = {
  invalid_request: 'invalid_request',
  platform_limit: 'platform_limit',
  not_allowed: 'not_allowed',
  unusable_file: 'invalid_media',
  unauthorized: 'invalid_api_key',
  forbidden: 'not_accessible',
  not_found: 'not_found',
  too_large: 'file_too_large',
  range_not_satisfiable: 'range_not_satisfiable',
  platform_unreachable: 'platform_unreachable',
  storage_unavailable: 'storage_unavailable',
};

export class DomainError extends Error {
  /** What a client matches on instead of the message (`post_not_found`, `platform_not_configured`, …). */
  readonly code: string;

  constructor(
    readonly kind: DomainErrorKind,
    message: string,
    readonly details?: ErrorDetail[],
    code?: string,
  ) {
    super(message);
    this.name = 'DomainError';
    // "Post not found" is post_not_found: each resource's own code.
    const resource = kind === 'not_found' ? /^(\w+) not found/.exec(message)?.[1] : undefined;
    this.code = code ?? (resource === undefined ? DEFAULT_CODES[kind] : `${resource.toLowerCase()}_not_found`);
  }
}

export const INVALID_REQUEST = 'Invalid request';

export function invalidRequest(details: ErrorDetail[]): DomainError {
  return new DomainError('invalid_request', INVALID_REQUEST, details);
}

/** What a log line says of a failure: its kind, never its message (which may carry SQL) or stack. */
export function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}
