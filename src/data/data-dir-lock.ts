import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';

/** Thrown when another process holds the embedded database folder. */
export class DataDirLockedError extends Error {
  constructor(dataDir: string) {
    super(
      `The embedded database in ${dataDir} is in use by another Herald process (a running server?); ` +
        'stop it first, or set DATABASE_URL to use Postgres',
    );
    this.name = 'DataDirLockedError';
  }
}

/**
 * PGlite has no lock of its own and two processes on one folder corrupt it,
 * so whoever opens the folder holds this lock until it closes the database.
 */
export async function lockDataDir(dataDir: string, onCompromised: (err: Error) => void): Promise<() => Promise<void>> {
  await mkdir(dataDir, { recursive: true });
  try {
    return await lockfile.lock(dataDir, {
      lockfilePath: join(dataDir, 'herald.lock'),
      stale: 15_000,
      update: 5_000,
      realpath: false,
      onCompromised,
    });
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ELOCKED') throw new DataDirLockedError(dataDir);
    throw err;
  }
}
