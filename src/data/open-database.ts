import { join } from 'node:path';
import { DataDirLockedError, lockDataDir } from './data-dir-lock.js';
import { CHANNEL_FILE, openThroughRunningServer, shareEmbedded } from './embedded-channel.js';
import { openEmbedded, openPostgres, type DatabaseHandle } from './database.js';

export interface DatabaseLocation {
  databaseUrl: string | undefined;
  dataDir: string;
}

export interface OpenOptions {
  /** Called when a Postgres client fails while idle, or the data folder lock is lost. */
  onBackgroundError?: (err: Error) => void;
  /** Shares the embedded database with CLI commands while it is open (a server does). */
  share?: boolean;
  /** When a running server holds the embedded folder, runs through it rather than failing (a CLI command does). */
  throughRunningServer?: boolean;
}

/** Postgres when a URL is given, else the embedded database in the data folder, held under a lock. */
export async function openDatabase(location: DatabaseLocation, options: OpenOptions = {}): Promise<DatabaseHandle> {
  const onError = options.onBackgroundError ?? (() => {});
  if (location.databaseUrl !== undefined) return openPostgres(location.databaseUrl, onError);
  const channel = join(location.dataDir, CHANNEL_FILE);
  let unlock: () => Promise<void>;
  try {
    unlock = await lockDataDir(location.dataDir, onError);
  } catch (err) {
    const shared = err instanceof DataDirLockedError && options.throughRunningServer ? await openThroughRunningServer(channel) : undefined;
    if (shared === undefined) throw err;
    return shared;
  }
  let stopSharing = async () => {};
  try {
    const handle = await openEmbedded({ dataDir: join(location.dataDir, 'pgdata') });
    // Without the socket the server still serves; commands are refused while it holds the folder, as before.
    if (options.share) stopSharing = await shareEmbedded(handle, channel, onError).catch((err: Error) => (onError(err), async () => {}));
    return {
      ...handle,
      async close() {
        try {
          await stopSharing();
          await handle.close();
        } finally {
          await unlock();
        }
      },
    };
  } catch (err) {
    await unlock();
    throw err;
  }
}
