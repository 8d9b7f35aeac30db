import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOG_REDACTION } from '../../src/cli/wiring/log-redaction.js';
import { buildApp } from '../../src/api/app.js';
import { UNLIMITED, useTestApi } from '../support/api.js';
import { postCount, userWithKey } from '../support/fixtures.js';
import { until } from '../support/wait.js';

// A client that hangs up mid-request (its body cut short) is not a failure of the service: logged as what it is, never as a 5xx error.
const api = useTestApi();
const lines: Record<string, unknown>[] = [];
let port = 0;
let reading = false;
let close = async () => {};

beforeAll(async () => {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().trim().split('\n')) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const app = await buildApp({ context: api.state, rateLimits: { limits: UNLIMITED }, loggerInstance: pino({ level: 'info', redact: LOG_REDACTION }, stream) });
  // Hung up on once Herald reads the body: midway through it, as the test means.
  app.addHook('preParsing', (_req, _reply, payload, done) => {
    reading = true;
    done(null, payload);
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as { port: number }).port;
  close = () => app.close();
});
afterAll(() => close());

describe('a client that disconnects midway through its body', () => {
  it('is logged at info as a closed connection, with no error line and no 503', async () => {
    const u = await userWithKey(api.db);
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.write(
      `POST /api/v1/posts HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${u.key}\r\nContent-Type: application/json\r\nContent-Length: 9000\r\n\r\n{"caption":"`,
    );
    await until('the body to be read', () => reading, { timeoutMs: 5000, everyMs: 10 });
    socket.destroy();
    const aboutTheRequest = () => lines.filter((l) => l.reqId !== undefined);
    await until('the request to be logged', () => aboutTheRequest().length > 0, { timeoutMs: 5000, everyMs: 10 });
    expect(aboutTheRequest().filter((l) => (l.level as number) >= 50)).toEqual([]);
    expect(lines.find((l) => l.msg === 'the client closed the connection before the answer')).toMatchObject({ level: 30, operation: '/api/v1/posts' });
    expect(aboutTheRequest().map((l) => l.status)).not.toContain(503);
    expect(await postCount(api.db, u.userId)).toBe(0);
  });
});
