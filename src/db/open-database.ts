import { openPostgres, type DatabaseHandle } from './database.js';
import { EmbeddedServer, SESSION_NAME, SESSION_START } from './embedded-server.js';

export interface DatabaseLocation {
  databaseUrl: string | undefined;
  dataDir: string;
}

export interface OpenOptions {
  /** Called when a Postgres client fails while idle. */
  onBackgroundError?: (err: Error) => void;
}

/**
 * Postgres when a URL is given, else the embedded PostgreSQL in the data folder: started when it
 * is not running (and again whenever a connection finds it gone), and stopped on close when no
 * other process is connected to it.
 */
export async function openDatabase(location: DatabaseLocation, options: OpenOptions = {}): Promise<DatabaseHandle> {
  const onError = options.onBackgroundError ?? (() => {});
  if (location.databaseUrl !== undefined) return openPostgres(location.databaseUrl, onError);
  const server = new EmbeddedServer(location.dataDir);
  await server.start();
  const handle = openPostgres(server.url(), onError, { start: () => server.start(), sessionStart: SESSION_START, sessionName: SESSION_NAME });
  return {
    ...handle,
    async close() {
      await handle.close();
      await server.stopIfLast();
    },
  };
}
