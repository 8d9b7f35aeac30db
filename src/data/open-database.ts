import { join } from 'node:path';
import { lockDataDir } from './data-dir-lock.js';
import { openEmbedded, openPostgres, type DatabaseHandle } from './database.js';

export interface DatabaseLocation {
  databaseUrl: string | undefined;
  dataDir: string;
}

export interface OpenOptions {
  /** Called when a Postgres client fails while idle, or the data folder lock is lost. */
  onBackgroundError?: (err: Error) => void;
}

/** Postgres when a URL is given, else the embedded database in the data folder, held under a lock. */
export async function openDatabase(location: DatabaseLocation, options: OpenOptions = {}): Promise<DatabaseHandle> {
  const onError = options.onBackgroundError ?? (() => {});
  if (location.databaseUrl !== undefined) return openPostgres(location.databaseUrl, onError);
  const unlock = await lockDataDir(location.dataDir, onError);
  try {
    const handle = await openEmbedded({ dataDir: join(location.dataDir, 'pgdata') });
    return {
      ...handle,
      async close() {
        try {
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
