/**
 * The half of a network namespace's bridge that runs inside it (netns.ts starts it with plain
 * `node`, which strips the types): TCP on the namespace's own 127.0.0.1 to Unix sockets in a
 * folder both sides see, since a file system path crosses network namespaces and a port does not.
 *
 *   node netns-bridge.ts <folder> <in ports> <out ports>
 *
 * - `in` ports (comma-separated): 127.0.0.1:port inside is the test's 127.0.0.1:port, reached
 *   through `<folder>/in-<port>.sock` (netns.ts listens there).
 * - `out` ports: a connection to `<folder>/out-<port>.sock` reaches 127.0.0.1:port inside.
 *
 * Prints `ready` once it listens on all of them.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

function pipe(a: Socket, b: Socket): void {
  a.pipe(b);
  b.pipe(a);
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.on('close', () => b.destroy());
  b.on('close', () => a.destroy());
}

function listening(server: Server, where: { port: number; host: string } | { path: string }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(where, () => resolve());
  });
}

const [folder = '', inPorts = '', outPorts = ''] = process.argv.slice(2);
const ports = (list: string) => list.split(',').filter(Boolean).map(Number);

await Promise.all([
  ...ports(inPorts).map((port) =>
    listening(
      createServer((socket) => pipe(socket, createConnection({ path: `${folder}/in-${port}.sock` }))),
      { port, host: '127.0.0.1' },
    ),
  ),
  ...ports(outPorts).map((port) =>
    listening(
      createServer((socket) => pipe(socket, createConnection({ port, host: '127.0.0.1' }))),
      { path: `${folder}/out-${port}.sock` },
    ),
  ),
]);
process.stdout.write('ready\n');
