import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newWebhookSecret } from '../../src/domain/webhooks/secrets.js';
import { createGuardedFetch } from '../../src/adapters/net/guarded-fetch.js';
import { createWebhookSender } from '../../src/adapters/webhooks/webhook-sender.js';
import { unusedPort } from '../support/ports.js';

/** The README's receiver, run as a user would copy it, fed requests signed by Herald's own sender. */
const MARKER = '<!-- receiver-example:';

function readmeReceiver(): string {
  const readme = readFileSync('README.md', 'utf8');
  const after = readme.slice(readme.indexOf(MARKER));
  const block = /```js\n([\s\S]*?)\n```/.exec(after);
  if (readme.indexOf(MARKER) < 0 || block?.[1] === undefined) throw new Error('README.md has no receiver example after its marker');
  return block[1];
}

const secret = newWebhookSecret();
const sender = createWebhookSender({ fetch: createGuardedFetch({ allowPrivateNetwork: true }), timeoutMs: 5_000 });
let receiver: ChildProcess;
let url: string;
let stdout = '';

async function listening(port: number): Promise<void> {
  for (const end = Date.now() + 15_000; ; ) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => resolve(true)).on('error', () => resolve(false));
      socket.unref();
      setTimeout(() => socket.destroy(), 500);
    });
    if (ok) return;
    if (Date.now() > end) throw new Error(`the README receiver did not listen on ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  const port = await unusedPort();
  url = `http://127.0.0.1:${port}/`;
  // Run from the repository so that `standardwebhooks` resolves as it would in a user's project.
  receiver = spawn(process.execPath, ['--input-type=module'], { env: { ...process.env, WEBHOOK_SECRET: secret, PORT: String(port) }, stdio: ['pipe', 'pipe', 'inherit'] });
  receiver.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  receiver.stdin?.end(readmeReceiver());
  await listening(port);
});
afterAll(() => {
  receiver?.kill();
});

describe("the README's webhook receiver", () => {
  const event = { id: 'evt_0123456789abcdefghjkmnpqrs', type: 'ping', timestamp: new Date().toISOString(), data: { webhookId: 'whk_x', message: 'hello' } };
  const body = JSON.stringify(event);

  it('accepts a request Herald signed, handles a repeat of the same event once, and refuses a bad signature', async () => {
    const first = await sender.send({ url, eventId: event.id, timestamp: new Date(), body, secrets: [secret] });
    expect(first).toMatchObject({ statusCode: 204, error: null });
    const repeat = await sender.send({ url, eventId: event.id, timestamp: new Date(), body, secrets: [newWebhookSecret(), secret] });
    expect(repeat).toMatchObject({ statusCode: 204, error: null });
    const forged = await sender.send({ url, eventId: event.id, timestamp: new Date(), body, secrets: [newWebhookSecret()] });
    expect(forged.statusCode).toBe(400);
    const stale = await sender.send({ url, eventId: event.id, timestamp: new Date(Date.now() - 10 * 60_000), body, secrets: [secret] });
    expect(stale.statusCode).toBe(400);
    expect(stdout.trim().split('\n')).toEqual([`ping ${event.id}`]);
  });
});
