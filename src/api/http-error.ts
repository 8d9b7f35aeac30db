/**
 * A failure of the transport rather than of the product (a body type the operation does not take,
 * a service still starting): the HTTP layer decides these, so they carry their status themselves.
 * The message is always safe to show the caller.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Sent as Retry-After. */
    readonly retryAfterSeconds?: number,
    /** The machine-readable code the error body carries. */
    readonly code: string = CODE_OF_STATUS[status] ?? 'error',
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

const CODE_OF_STATUS: Record<number, string> = {
  409: 'idempotency_in_progress',
  415: 'unsupported_content_type',
  422: 'idempotency_key_reused',
  429: 'rate_limited',
  503: 'not_ready',
};
