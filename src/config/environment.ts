import { resolve } from 'node:path';

/** Everything the service reads from its environment; README.md lists the same variables. */
export interface Environment {
  /** Postgres connection string; without it the embedded database in dataDir is used. */
  databaseUrl: string | undefined;
  dataDir: string;
  host: string;
  port: number;
  migrateOnStart: boolean;
  demoOnFirstStart: boolean;
  logLevel: string;
  /** The largest media upload accepted, in bytes. */
  maxUploadBytes: number;
}

export function readEnvironment(env: NodeJS.ProcessEnv = process.env): Environment {
  return {
    databaseUrl: nonEmpty(env.DATABASE_URL),
    dataDir: resolve(nonEmpty(env.HERALD_DATA_DIR) ?? '.herald'),
    host: nonEmpty(env.HOST) ?? '127.0.0.1',
    port: port(env.PORT),
    migrateOnStart: flag('HERALD_MIGRATE_ON_START', env.HERALD_MIGRATE_ON_START),
    demoOnFirstStart: flag('HERALD_DEMO_ON_FIRST_START', env.HERALD_DEMO_ON_FIRST_START),
    logLevel: nonEmpty(env.LOG_LEVEL) ?? 'info',
    maxUploadBytes: positiveInteger('HERALD_MAX_UPLOAD_BYTES', env.HERALD_MAX_UPLOAD_BYTES, 512 * 1024 * 1024),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

function port(value: string | undefined): number {
  if (nonEmpty(value) === undefined) return 3000;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`PORT must be an integer from 0 to 65535, got ${value}`);
  return n;
}

function positiveInteger(name: string, value: string | undefined, fallback: number): number {
  if (nonEmpty(value) === undefined) return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got ${value}`);
  return n;
}

function flag(name: string, value: string | undefined): boolean {
  const v = nonEmpty(value)?.toLowerCase();
  if (v === undefined || v === 'false' || v === '0') return false;
  if (v === 'true' || v === '1') return true;
  throw new Error(`${name} must be true or false, got ${value}`);
}
