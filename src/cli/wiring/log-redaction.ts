/** Keys that hold a secret wherever they appear in a logged object: platform tokens, passwords, sealed credentials. */
const SECRET_KEYS = [
  'credentials',
  'accessToken',
  'refreshToken',
  'appPassword',
  'password',
  'accessJwt',
  'refreshJwt',
  'secret',
  // Mastodon's OAuth answers spell them this way.
  'access_token',
  'refresh_token',
  'client_secret',
];

/** pino paths match one level each; three levels under the logged object cover what Herald logs (an account, a job, its data). */
const DEPTHS = ['', '*.', '*.*.', '*.*.*.'];

/**
 * pino's `redact` for every logger of the service (the API's and the workers'): the Authorization header wherever a request or
 * its headers are logged, and the secret keys above at any depth pino paths can express here.
 */
export const LOG_REDACTION = {
  paths: [
    'req.headers.authorization',
    'headers.authorization',
    '*.headers.authorization',
    ...SECRET_KEYS.flatMap((key) => DEPTHS.map((depth) => `${depth}${key}`)),
  ],
  censor: '[redacted]',
};
