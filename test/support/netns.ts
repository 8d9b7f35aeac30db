import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { TcpProxy } from './tcp-proxy.js';

/**
 * A machine of its own for a test's processes: a Linux network namespace, whose 127.0.0.1 is its
 * own, made with `ip netns` (root and iproute2). Its processes reach only the test's ports it is
 * given (`reach`), each at the same 127.0.0.1 port inside, and the test reaches only the ports it
 * serves (`serve`). Both go through Unix sockets in a folder (netns-bridge.ts runs the inside
 * half), so nothing leaves 127.0.0.1 on either side.
 */
export interface Machine {
  /** The program and arguments that run `file args` inside the machine. */
  command: (file: string, args: readonly string[]) => [string, string[]];
  /** Where the test reaches a port the machine serves: http://127.0.0.1:<a port of the test's>. */
  urlOf: (port: number) => string;
  close(): Promise<void>;
}

const BRIDGE = join(import.meta.dirname, 'netns-bridge.ts');

/** Whether this machine lets a test make network namespaces. */
export function canMakeNetworkNamespaces(): boolean {
  const name = `herald-probe-${randomBytes(3).toString('hex')}`;
  try {
    execFileSync('ip', ['netns', 'add', name], { stdio: 'ignore' });
    execFileSync('ip', ['netns', 'del', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export async function startMachine(ports: { reach: readonly number[]; serve: readonly number[] }): Promise<Machine> {
  const name = `herald-${randomBytes(4).toString('hex')}`;
  // Short: a Unix socket's path is at most 107 bytes.
  const folder = mkdtempSync('/tmp/hns-');
  const proxies: TcpProxy[] = [];
  let bridge: ChildProcess | undefined;
  const close = async () => {
    if (bridge !== undefined && bridge.exitCode === null && bridge.signalCode === null) {
      const exited = new Promise((resolve) => bridge?.once('exit', resolve));
      bridge.kill('SIGKILL');
      await exited;
    }
    await Promise.all(proxies.map((proxy) => proxy.stop()));
    try {
      execFileSync('ip', ['netns', 'del', name], { stdio: 'ignore' });
    } catch {
      // Never made.
    }
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    for (const port of ports.reach) proxies.push(new TcpProxy({ host: '127.0.0.1', port }, { path: join(folder, `in-${port}.sock`) }));
    const served = new Map(ports.serve.map((port) => [port, new TcpProxy({ path: join(folder, `out-${port}.sock`) })]));
    proxies.push(...served.values());
    await Promise.all(proxies.map((proxy) => proxy.start()));
    execFileSync('ip', ['netns', 'add', name], { stdio: 'ignore' });
    execFileSync('ip', ['-n', name, 'link', 'set', 'lo', 'up'], { stdio: 'ignore' });
    const args = [BRIDGE, folder, ports.reach.join(','), ports.serve.join(',')];
    const started = spawn('ip', ['netns', 'exec', name, process.execPath, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    bridge = started;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the namespace bridge did not start in 10 s')), 10_000);
      started.stdout?.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) {
          clearTimeout(timer);
          resolve();
        }
      });
      started.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the namespace bridge exited with ${code}`));
      });
    });
    return {
      command: (file, args) => ['ip', ['netns', 'exec', name, file, ...args]],
      urlOf: (port) => {
        const proxy = served.get(port);
        if (proxy === undefined) throw new Error(`port ${port} is not served by this machine`);
        return `http://127.0.0.1:${proxy.port}`;
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
