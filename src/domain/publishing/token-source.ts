import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { releaseRefreshLease, selectCredentialsLease, takeRefreshLease, updateCredentialsIfVersion } from '../../db/queries/publishing.js';
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
 * How long a refresh may hold an account's credentials: longer than a platform's token call may
 * take (30 s), so a live holder is never overtaken; a holder that died lets the next one go after it.
 */
export const REFRESH_LEASE_MS = 90_000;
/** How often a refresher that meets another's lease looks whether it was given back. */
export const REFRESH_LEASE_POLL_MS = 100;

export interface RefreshDeps {
  db: Kysely<Database>;
  vault: CredentialVault;
  now(): Date;
  /** Waits between looks at another refresher's lease (the tests' clock); a timer by default. */
  pause?: (ms: number) => Promise<void>;
}

/**
 * The one way stored platform credentials are refreshed, for every platform. Refreshes of one
 * account are serialised across workers by a lease on its row: many platforms rotate the refresh
 * token on every use (Bluesky, X, TikTok, Pinterest), so two refreshes from the same token would
 * leave the second with a dead one and a healthy account marked for reconnection.
 *
 * The lease is written in a statement that commits on its own; the platform is then called with no
 * database connection and no row lock held (a platform that never answers must not take the pool,
 * nor hold back a claim that meets the account); the refreshed credentials are stored, and the
 * lease given back, in one statement that writes only while the lease is still this one's. A
 * refresher that meets another's lease waits for it to be given back or to run out, then uses what
 * the holder stored. Credentials a publication has not seen (refreshed by another, or the account
 * reconnected, since `seenVersion`) are handed back as they are, without refreshing again; a
 * refreshed pair is never used before it is stored. Rejects with what `refresh` rejects with,
 * storing nothing.
 */
export async function refreshCredentials<C>(
  deps: RefreshDeps,
  accountId: string,
  seenVersion: number,
  refresh: (current: C) => Promise<C>,
  /** When refreshed credentials end unless refreshed again (the publisher's credentialsEndAt), to move the account's end with them. */
  endOf?: (credentials: C) => Date | null,
): Promise<{ credentials: C; version: number }> {
  const leaseId = randomUUID();
  const pause = deps.pause ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (;;) {
    const now = deps.now();
    const taken = await takeRefreshLease(deps.db, accountId, leaseId, now, new Date(now.getTime() + REFRESH_LEASE_MS));
    if (taken === undefined) {
      const row = await selectCredentialsLease(deps.db, accountId);
      if (row?.credentials === null || row === undefined) throw new CredentialsGoneError();
      if (row.credentials_version !== seenVersion) return { credentials: deps.vault.open<C>(row.credentials), version: row.credentials_version };
      // Another refresher holds it: wait for what it stores, or for its lease to run out.
      const leaseLeft = (row.refresh_lease_until?.getTime() ?? 0) - now.getTime();
      await pause(Math.max(1, Math.min(REFRESH_LEASE_POLL_MS, leaseLeft)));
      continue;
    }
    if (taken.credentials === null || taken.credentials_version !== seenVersion) {
      await releaseRefreshLease(deps.db, accountId, leaseId);
      if (taken.credentials === null) throw new CredentialsGoneError();
      return { credentials: deps.vault.open<C>(taken.credentials), version: taken.credentials_version };
    }
    let next: C;
    let sealed: string;
    try {
      next = await refresh(deps.vault.open<C>(taken.credentials));
      sealed = sealCredentials(deps.vault, next);
    } catch (error) {
      await releaseRefreshLease(deps.db, accountId, leaseId);
      throw error;
    }
    const endsAt = endOf?.(next) ?? undefined;
    if (await updateCredentialsIfVersion(deps.db, accountId, seenVersion, leaseId, sealed, endsAt)) {
      return { credentials: next, version: seenVersion + 1 };
    }
    // Reconnected or disconnected meanwhile (or the lease outlived by a holder slower than it): what is stored now wins.
    const stored = await selectCredentialsLease(deps.db, accountId);
    if (stored?.credentials === null || stored === undefined || stored.credentials_version === seenVersion) throw new CredentialsGoneError();
    return { credentials: deps.vault.open<C>(stored.credentials), version: stored.credentials_version };
  }
}
