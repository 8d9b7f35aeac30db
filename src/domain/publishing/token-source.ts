import type { Kysely } from 'kysely';
import { selectCredentialsForUpdate, updateCredentialsIfVersion } from '../../db/queries/publishing.js';
import type { Database } from '../../db/schema.js';
import type { CredentialVault } from '../ports/secrets.js';

/** The most a platform's credentials may take as JSON (UTF-8): real ones are a few KiB; a hostile platform's must not bloat rows. */
export const CREDENTIALS_LIMIT_BYTES = 32 * 1024;

/** The platform's credentials are larger than Herald stores. */
export class CredentialsTooLargeError extends Error {
  constructor() {
    super(`The platform answered credentials larger than ${CREDENTIALS_LIMIT_BYTES / 1024} KiB, which Herald does not store`);
    this.name = 'CredentialsTooLargeError';
  }
}

/** The credentials sealed for storage; throws CredentialsTooLargeError past the limit. */
export function sealCredentials(vault: CredentialVault, credentials: unknown): string {
  if (Buffer.byteLength(JSON.stringify(credentials) ?? '', 'utf8') > CREDENTIALS_LIMIT_BYTES) throw new CredentialsTooLargeError();
  return vault.seal(credentials as object);
}

/** The credentials cannot be refreshed here: the account was disconnected meanwhile. */
export class CredentialsGoneError extends Error {
  constructor() {
    super('The account was disconnected while it was being published to');
    this.name = 'CredentialsGoneError';
  }
}

/**
 * The one way stored platform credentials are refreshed, for every platform. Refreshes of one
 * account are serialised by a lock on its row, across workers: many platforms rotate the refresh
 * token on every use (Bluesky, X, TikTok, Pinterest), so two refreshes from the same token would
 * leave the second with a dead one and a healthy account marked for reconnection.
 *
 * Inside the lock, credentials a publication has not seen (another worker refreshed them, or the
 * account was reconnected, since `seenVersion`) are handed back as they are, without refreshing
 * again; else `refresh` runs on the stored ones and its result is committed before it is returned
 * (a refreshed pair is never used before it is stored). Rejects with what `refresh` rejects with,
 * storing nothing.
 */
export async function refreshCredentials<C>(
  deps: { db: Kysely<Database>; vault: CredentialVault },
  accountId: string,
  seenVersion: number,
  refresh: (current: C) => Promise<C>,
  /** When refreshed credentials end unless refreshed again (the publisher's credentialsEndAt), to move the account's end with them. */
  endOf?: (credentials: C) => Date | null,
): Promise<{ credentials: C; version: number }> {
  return deps.db.transaction().execute(async (trx) => {
    const row = await selectCredentialsForUpdate(trx, accountId);
    if (row?.credentials === null || row === undefined) throw new CredentialsGoneError();
    const stored = deps.vault.open<C>(row.credentials);
    if (row.credentials_version !== seenVersion) return { credentials: stored, version: row.credentials_version };
    const next = await refresh(stored);
    const endsAt = endOf?.(next) ?? undefined;
    if (!(await updateCredentialsIfVersion(trx, accountId, row.credentials_version, sealCredentials(deps.vault, next), endsAt)))
      throw new CredentialsGoneError();
    return { credentials: next, version: row.credentials_version + 1 };
  });
}
