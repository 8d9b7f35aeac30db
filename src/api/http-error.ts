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
  ) {
    super(message);
    this.name = 'HttpError';
  }
}
