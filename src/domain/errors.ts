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
  | 'platform_unreachable'; // 502: a platform did not answer a call made for the request

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message);
    this.name = 'DomainError';
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
