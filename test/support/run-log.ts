import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { inject } from 'vitest';
import { LOG_REDACTION } from '../../src/cli/wiring/log-redaction.js';

/**
 * The log of the whole test run: every app and worker the tests build logs into it at trace level
 * with the service's own redaction, and every secret the tests create or are shown is noted beside
 * it. When the run ends, global-setup's teardown looks for each secret in the log.
 */
const file = (kind: 'log' | 'secrets') => join(inject('runLogDir'), `${kind}-${process.pid}.txt`);

let logger: Logger | undefined;

/** The pino logger of this test process, as the service configures its own (redaction included). */
export function runLogger(): Logger {
  logger ??= pino({ level: 'trace', redact: LOG_REDACTION }, pino.destination({ dest: file('log'), append: true, sync: true }));
  return logger;
}

/** Notes a secret (an API key, a webhook secret, a credential) that must never appear in the log. */
export function noteSecret(value: string): void {
  appendFileSync(file('secrets'), `${JSON.stringify(value)}\n`);
}

const SHOWN_ONCE = /^(hrld_|whsec_)/;

/** Notes the secrets a request sends (credentials) and an answer shows (a new key, a webhook secret). */
export function noteSecretsOf(requestBody: unknown, responseBody: unknown): void {
  const credentials = (requestBody as { credentials?: unknown } | undefined)?.credentials;
  if (credentials !== null && typeof credentials === 'object') {
    for (const value of Object.values(credentials)) if (typeof value === 'string') noteSecret(value);
  }
  for (const value of Object.values(responseBody !== null && typeof responseBody === 'object' ? responseBody : {})) {
    if (typeof value === 'string' && SHOWN_ONCE.test(value)) noteSecret(value);
  }
}
