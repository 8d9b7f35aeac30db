import type { Kysely, Transaction, Updateable } from 'kysely';
import {
  deleteEndpointOwnedBy,
  insertEndpoint,
  selectAttemptsPage,
  selectEndpointOwnedBy,
  selectEndpointOwnedByForUpdate,
  selectEndpointsPage,
  updateEndpointOwnedBy,
  type EndpointRow,
} from '../../db/queries/webhooks.js';
import type { Database, WebhookEndpointsTable } from '../../db/schema.js';
import type { CredentialVault } from '../ports/secrets.js';
import type { KeepWithWork } from '../idempotency.js';
import type { PingEvent, Webhook, WebhookCreateInput, WebhookDeliveryList, WebhookList, WebhookUpdateInput, WebhookWithSecret } from '../api-types.js';
import { DomainError } from '../errors.js';
import { isWellFormedId, newId } from '../ids.js';
import { emitPing } from './events.js';
import { newWebhookSecret, sealWebhookSecret } from './secrets.js';
import { toDeliveryView, toWebhookView } from './views.js';

export const WEBHOOK_NOT_FOUND = 'Webhook not found';

export interface WebhookDeps {
  db: Kysely<Database>;
  vault: CredentialVault;
  /** Refuses (throws, with a message for the caller) a URL the SSRF guard would not call. */
  checkServiceUrl(url: string): void;
}

export async function listWebhooks(db: Kysely<Database>, userId: string, limit: number, offset: number, now: Date): Promise<WebhookList> {
  const rows = await selectEndpointsPage(db, userId, limit, offset);
  return { data: rows.map((row) => toWebhookView(row, now)), limit, offset };
}

/** Registers an endpoint; its secret is stored only sealed and shown in this answer alone. */
export async function createWebhook(
  deps: WebhookDeps,
  userId: string,
  input: WebhookCreateInput,
  now: Date,
  keep?: KeepWithWork<WebhookWithSecret>,
): Promise<WebhookWithSecret> {
  requireAllowedUrl(deps, input.url);
  const secret = newWebhookSecret();
  return deps.db.transaction().execute(async (trx) => {
    const row = await insertEndpoint(trx, {
      id: newId('whk'),
      user_id: userId,
      url: input.url,
      event_types: JSON.stringify(input.eventTypes),
      description: input.description ?? null,
      secret: sealWebhookSecret(deps.vault, secret),
      created_at: now,
      updated_at: now,
    });
    const created = { ...toWebhookView(row, now), secret };
    await keep?.(trx, created);
    return created;
  });
}

export async function getWebhook(db: Kysely<Database>, userId: string, id: string, now: Date): Promise<Webhook> {
  return toWebhookView(await requireOwnedEndpoint(db, userId, id), now);
}

/**
 * Changes what the caller sent and nothing else. Turning an endpoint on starts it afresh (no
 * reason, no failure run); turning it off is the owner's doing, so it has no reason either.
 * Sending the state it already has changes nothing of it, so a repeated request keeps
 * `disabledAt` and the failure run the delivery engine counts.
 */
export async function updateWebhook(deps: Omit<WebhookDeps, 'vault'>, userId: string, id: string, input: WebhookUpdateInput, now: Date): Promise<Webhook> {
  if (input.url !== undefined) requireAllowedUrl(deps, input.url);
  return withOwnedEndpoint(deps.db, userId, id, async (trx, endpoint) => {
    const values: Updateable<WebhookEndpointsTable> = { updated_at: now };
    if (input.url !== undefined) values.url = input.url;
    if (input.eventTypes !== undefined) values.event_types = JSON.stringify(input.eventTypes);
    if (input.description !== undefined) values.description = input.description;
    if (input.enabled === true && !endpoint.enabled) {
      Object.assign(values, { enabled: true, disabled_reason: null, disabled_at: null, consecutive_failures: 0, failing_since: null });
    }
    if (input.enabled === false && endpoint.enabled) Object.assign(values, { enabled: false, disabled_reason: null, disabled_at: now });
    return toWebhookView(await changeEndpoint(trx, endpoint, values), now);
  });
}

/** Deletes an endpoint with its deliveries and attempts (the foreign keys cascade). */
export async function deleteWebhook(db: Kysely<Database>, userId: string, id: string): Promise<void> {
  const deleted = isWellFormedId('whk', id) && (await deleteEndpointOwnedBy(db, id, userId));
  if (!deleted) throw new DomainError('not_found', WEBHOOK_NOT_FOUND);
}

/**
 * Gives the endpoint a new secret. The current one keeps signing for `overlapSeconds` as the
 * previous secret, replacing one still in its overlap: only two secrets ever sign.
 */
export async function rotateWebhookSecret(
  deps: Omit<WebhookDeps, 'checkServiceUrl'>,
  userId: string,
  id: string,
  overlapSeconds: number,
  now: Date,
): Promise<WebhookWithSecret> {
  return withOwnedEndpoint(deps.db, userId, id, async (trx, endpoint) => {
    const secret = newWebhookSecret();
    const overlaps = overlapSeconds > 0;
    const row = await changeEndpoint(trx, endpoint, {
      secret: sealWebhookSecret(deps.vault, secret),
      previous_secret: overlaps ? endpoint.secret : null,
      previous_secret_expires_at: overlaps ? new Date(now.getTime() + overlapSeconds * 1000) : null,
      updated_at: now,
    });
    return { ...toWebhookView(row, now), secret };
  });
}

/** Records a ping for the endpoint, enabled or not; a worker sends it like every other event. */
export async function testWebhook(db: Kysely<Database>, userId: string, id: string, now: Date): Promise<PingEvent> {
  return withOwnedEndpoint(db, userId, id, async (trx, endpoint) => {
    const event = await emitPing(trx, endpoint, now);
    return { id: event.id, type: 'ping', timestamp: event.timestamp, data: event.data };
  });
}

export async function listWebhookDeliveries(db: Kysely<Database>, userId: string, id: string, limit: number, offset: number): Promise<WebhookDeliveryList> {
  const endpoint = await requireOwnedEndpoint(db, userId, id);
  const rows = await selectAttemptsPage(db, endpoint.id, limit, offset);
  return { data: rows.map(toDeliveryView), limit, offset };
}

async function requireOwnedEndpoint(db: Kysely<Database>, userId: string, id: string): Promise<EndpointRow> {
  const endpoint = isWellFormedId('whk', id) ? await selectEndpointOwnedBy(db, id, userId) : undefined;
  if (endpoint === undefined) throw new DomainError('not_found', WEBHOOK_NOT_FOUND);
  return endpoint;
}

/**
 * Runs `work` in a transaction holding the lock on one of the caller's endpoints, so that what it
 * read (the state, the current secret) is still true when it writes, and a delete waits for it.
 * Anything that is not the caller's endpoint is simply not found.
 */
async function withOwnedEndpoint<T>(
  db: Kysely<Database>,
  userId: string,
  id: string,
  work: (trx: Transaction<Database>, endpoint: EndpointRow) => Promise<T>,
): Promise<T> {
  if (!isWellFormedId('whk', id)) throw new DomainError('not_found', WEBHOOK_NOT_FOUND);
  return db.transaction().execute(async (trx) => {
    const endpoint = await selectEndpointOwnedByForUpdate(trx, id, userId);
    if (endpoint === undefined) throw new DomainError('not_found', WEBHOOK_NOT_FOUND);
    return work(trx, endpoint);
  });
}

async function changeEndpoint(trx: Transaction<Database>, endpoint: EndpointRow, values: Updateable<WebhookEndpointsTable>): Promise<EndpointRow> {
  const row = await updateEndpointOwnedBy(trx, endpoint.id, endpoint.user_id, values);
  if (row === undefined) throw new Error(`locked endpoint ${endpoint.id} is missing`);
  return row;
}

/** The SSRF guard's refusal is the caller's to fix (400 `URL not allowed: …`); nothing is stored. */
function requireAllowedUrl(deps: Pick<WebhookDeps, 'checkServiceUrl'>, url: string): void {
  try {
    deps.checkServiceUrl(url);
  } catch (error) {
    // By name: the domain knows the guard only by its type.
    if (error instanceof Error && error.name === 'UrlNotAllowedError') throw new DomainError('not_allowed', error.message, undefined, 'url_not_allowed');
    throw error;
  }
}
