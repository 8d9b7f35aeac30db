import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedServer } from '../../src/db/embedded-server.js';

/** A data folder of Herald's for a test. Under root, PostgreSQL runs as the user postgres, who must be able to enter it. */
export async function makeDataDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await chmod(dir, 0o711);
  return dir;
}

/** Removes a data folder, stopping first the embedded server a failed test may have left running in it. */
export async function removeDataDir(dir: string): Promise<void> {
  await new EmbeddedServer(dir).stop();
  await rm(dir, { recursive: true, force: true });
}
