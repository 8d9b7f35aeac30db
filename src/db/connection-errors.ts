/** Error codes meaning the database server could not be reached or went away (not a bad query). */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '57014', // query_canceled: the statement timeout, a server too slow to count as available
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);

/** node-postgres reports these without a code. */
const UNAVAILABLE_MESSAGES = [
  'timeout exceeded when trying to connect',
  'Connection terminated',
  'Client has encountered a connection error',
  'Query read timeout',
];

export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  // A server's Unix socket that is not there: the server is not running.
  if (code === 'ENOENT' && (err as { syscall?: unknown }).syscall === 'connect') return true;
  if (err instanceof AggregateError && err.errors.some(isDatabaseUnavailable)) return true;
  if (err.cause !== undefined && isDatabaseUnavailable(err.cause)) return true;
  return UNAVAILABLE_MESSAGES.some((m) => err.message.includes(m));
}
