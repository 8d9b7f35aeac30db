import { createServer } from 'node:net';

/** A port on 127.0.0.1 that nothing listens on: taken, then released. */
export async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  await new Promise((r) => server.close(r));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}
