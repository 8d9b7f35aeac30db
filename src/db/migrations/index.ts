import type { Migration } from 'kysely';
import * as initial from './2026-11-22T0001-initial.js';
import * as mediaStorage from './2026-11-22T0002-media-storage.js';
import * as publishing from './2026-11-23T0003-publishing.js';
import * as webhooks from './2026-11-24T0004-webhooks.js';
import * as idempotencyKeys from './2026-11-24T0005-idempotency-keys.js';
import * as apiKeyChanges from './2026-11-26T0006-api-key-changes.js';
import * as dueAnnouncements from './2026-11-26T0007-due-announcements.js';
import * as membershipRoles from './2026-11-27T0008-membership-roles.js';
import * as sealedIdempotencyAnswers from './2026-11-27T0009-sealed-idempotency-answers.js';
import * as webhookAttemptsInFlight from './2026-11-27T0010-webhook-attempts-in-flight.js';
import * as rowsAsTheQueue from './2026-11-28T0011-rows-as-the-queue.js';
import * as pendingOutcomes from './2026-11-28T0012-pending-outcomes.js';
import * as connections from './2026-11-28T0013-connections.js';
import * as expiringCredentials from './2026-11-28T0014-expiring-credentials.js';
import * as instanceApps from './2026-11-28T0015-instance-apps.js';
import * as connectionAccounts from './2026-11-28T0016-connection-accounts.js';
import * as accountTurns from './2026-11-28T0017-account-turns.js';
import * as refreshLeases from './2026-11-28T0018-refresh-leases.js';
import * as consentLinks from './2026-11-28T0020-consent-links.js';
import * as connectionErrorCodes from './2026-11-28T0021-connection-error-codes.js';

/** Every migration by name; names sort in the order they run. */
export const migrations: Record<string, Migration> = {
  '2026-11-22T0001-initial': initial,
  '2026-11-22T0002-media-storage': mediaStorage,
  '2026-11-23T0003-publishing': publishing,
  '2026-11-24T0004-webhooks': webhooks,
  '2026-11-24T0005-idempotency-keys': idempotencyKeys,
  '2026-11-26T0006-api-key-changes': apiKeyChanges,
  '2026-11-26T0007-due-announcements': dueAnnouncements,
  '2026-11-27T0008-membership-roles': membershipRoles,
  '2026-11-27T0009-sealed-idempotency-answers': sealedIdempotencyAnswers,
  '2026-11-27T0010-webhook-attempts-in-flight': webhookAttemptsInFlight,
  '2026-11-28T0011-rows-as-the-queue': rowsAsTheQueue,
  '2026-11-28T0012-pending-outcomes': pendingOutcomes,
  '2026-11-28T0013-connections': connections,
  '2026-11-28T0014-expiring-credentials': expiringCredentials,
  '2026-11-28T0015-instance-apps': instanceApps,
  '2026-11-28T0016-connection-accounts': connectionAccounts,
  '2026-11-28T0017-account-turns': accountTurns,
  '2026-11-28T0018-refresh-leases': refreshLeases,
  '2026-11-28T0020-consent-links': consentLinks,
  '2026-11-28T0021-connection-error-codes': connectionErrorCodes,
};
