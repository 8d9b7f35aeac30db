/**
 * What pino blanks out of every log line, in the API and in workers: the API key, and any
 * credential a platform call or a connect request carries, wherever it sits in a logged object.
 */
export const LOG_REDACTION = {
  paths: [
    'req.headers.authorization',
    'headers.authorization',
    ...['credentials', 'accessToken', 'appPassword', 'password', 'accessJwt', 'refreshJwt', 'secret', 'key'].flatMap((key) => [key, `*.${key}`, `*.*.${key}`]),
  ],
  censor: '[redacted]',
};
