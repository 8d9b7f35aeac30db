import type { Kysely } from 'kysely';
import {
  countAttemptsInFlight,
  insertAttempt,
  lockDeliveryClaimsOf,
  selectDeliveryForUpdate,
  selectEndpointForUpdate,
  selectEvent,
  selectNextDueDeliveryForUpdate,
  updateDelivery,
  updateEndpoint,
  type DeliveryRow,
  type EndpointRow,
  type EventRow,
} from '../../db/queries/webhooks.js';
import type { Database } from '../../db/schema.js';
import type { WebhookResponse } from '../ports/webhook-sender.js';
import type { Dependencies } from '../dependencies.js';
import { errorName } from '../errors.js';
import { openWebhookSecret } from './secrets.js';
import { deliveryLeaseMs, retryDelayMs, type WebhookSettings } from './settings.js';

/** What delivering events needs. */
export type DeliveryDeps = Pick<Dependencies, 'db' | 'vault' | 'webhooks' | 'now' | 'log'>;

interface DeliveryClaim {
  delivery: DeliveryRow;
  attempt: number;
  attemptedAt: Date;
  event: EventRow;
  endpoint: EndpointRow;
}

export const LOST_ATTEMPT_ERROR = 'The worker stopped during this attempt; its outcome is unknown';

/**
 * Attempts the next due delivery no other worker holds: `delivered` when it sent a request,
 * `settled` when it found nothing to send after all (or held it back), `none` when nothing is due.
 */
export async function deliverNextDue(deps: DeliveryDeps): Promise<'delivered' | 'settled' | 'none'> {
  const taken = await takeNextDueDelivery(deps);
  if (taken === 'none' || taken === 'settled') return taken;
  await taken.send();
  return 'delivered';
}

/**
 * As deliverNextDue, returning once the attempt is taken: `send` then makes it. Deliveries whose
 * endpoint or owner has as many attempts in flight as the settings allow are passed over.
 */
export async function takeNextDueDelivery(deps: DeliveryDeps): Promise<'settled' | 'none' | { send(): Promise<void> }> {
  const { settings } = deps.webhooks;
  const claim = await deps.db.transaction().execute(async (trx) => {
    const caps = { perEndpoint: settings.maxInFlightPerEndpoint, perUser: settings.maxInFlightPerUser };
    const delivery = await selectNextDueDeliveryForUpdate(trx, deps.now(), caps);
    return delivery === undefined ? undefined : claimDelivery(trx, deps, delivery);
  });
  if (claim === undefined) return 'none';
  if (claim === null) return 'settled';
  return { send: () => attemptDelivery(deps, claim) };
}

/**
 * Inside the delivery's lock: holds it back while its endpoint or owner has its share of attempts
 * in flight, records an attempt a stopped worker left without an outcome, gives up what may no
 * longer be sent, and takes the next attempt under a lease, recorded before the request so that a
 * worker dying mid-request is followed up when the lease ends.
 */
async function claimDelivery(trx: Kysely<Database>, deps: DeliveryDeps, delivery: DeliveryRow): Promise<DeliveryClaim | null> {
  const now = deps.now();
  const { settings } = deps.webhooks;
  if (delivery.due_at === null || delivery.due_at > now || (delivery.state !== 'pending' && delivery.state !== 'delivering')) return null;
  const [event, endpoint] = await Promise.all([selectEvent(trx, delivery.event_id), selectEndpointForUpdate(trx, delivery.endpoint_id)]);
  if (event === undefined || endpoint === undefined) return null;
  // A disabled endpoint is sent nothing but pings; an event that used all its attempts is given up.
  const givenUp = (!endpoint.enabled && event.type !== 'ping') || delivery.attempts >= settings.maxAttempts;
  if (!givenUp && (await atCapacity(trx, settings, endpoint, now))) return null;

  if (delivery.state === 'delivering') {
    await insertAttempt(trx, {
      delivery_id: delivery.id,
      attempt: delivery.attempts,
      endpoint_id: endpoint.id,
      event_id: event.id,
      event_type: event.type,
      attempted_at: new Date(delivery.due_at.getTime() - deliveryLeaseMs(settings)),
      succeeded: false,
      status_code: null,
      latency_ms: null,
      error: LOST_ATTEMPT_ERROR,
      response_excerpt: null,
      next_attempt_at: delivery.attempts < settings.maxAttempts ? now : null,
    });
  }
  if (givenUp) {
    await updateDelivery(trx, delivery.id, { state: 'failed', due_at: null });
    return null;
  }
  const attempt = delivery.attempts + 1;
  const taken = {
    state: 'delivering' as const,
    attempts: attempt,
    first_attempt_at: delivery.first_attempt_at ?? now,
    due_at: new Date(now.getTime() + deliveryLeaseMs(settings)),
  };
  await updateDelivery(trx, delivery.id, taken);
  return { delivery: { ...delivery, ...taken }, attempt, attemptedAt: now, event, endpoint };
}

/**
 * Whether the endpoint or its owner already has as many attempts in flight as allowed: the
 * delivery then waits, still due, until one of them ends. Claims of one owner's deliveries take
 * turns from here to their commit, so every worker counts the attempts the others took.
 */
async function atCapacity(trx: Kysely<Database>, settings: WebhookSettings, endpoint: EndpointRow, now: Date): Promise<boolean> {
  await lockDeliveryClaimsOf(trx, endpoint.user_id);
  const inFlight = await countAttemptsInFlight(trx, endpoint.id, endpoint.user_id, now);
  return inFlight.endpoint >= settings.maxInFlightPerEndpoint || inFlight.user >= settings.maxInFlightPerUser;
}

/** Sends one attempt and records it. Never throws. */
async function attemptDelivery(deps: DeliveryDeps, claim: DeliveryClaim): Promise<void> {
  const { event, endpoint, attemptedAt } = claim;
  let response: WebhookResponse;
  try {
    const secrets = [endpoint.secret];
    if (endpoint.previous_secret !== null && endpoint.previous_secret_expires_at !== null && endpoint.previous_secret_expires_at > attemptedAt) {
      secrets.push(endpoint.previous_secret);
    }
    const opened = secrets.map((sealed) => openWebhookSecret(deps.vault, sealed));
    response = await deps.webhooks.sender.send({ url: endpoint.url, eventId: event.id, timestamp: attemptedAt, body: event.body, secrets: opened });
  } catch {
    // The vault refused the sealed secret (the service's key changed): nothing was sent.
    response = { statusCode: null, latencyMs: 0, error: "The signing secret cannot be read with this server's key; rotate the secret", excerpt: null };
  }
  await recordAttempt(deps, claim, response).catch((error: unknown) => {
    deps.log.error(
      { deliveryId: claim.delivery.id, errorName: errorName(error) },
      'could not record a webhook attempt; it will be repeated when its lease ends',
    );
  });
}

/** Writes an attempt over the claim that made it: the delivery's next step, and the endpoint's run of failures. */
async function recordAttempt(deps: DeliveryDeps, claim: DeliveryClaim, response: WebhookResponse): Promise<void> {
  const { settings } = deps.webhooks;
  const now = deps.now();
  await deps.db.transaction().execute(async (trx) => {
    const delivery = await selectDeliveryForUpdate(trx, claim.delivery.id);
    // Another worker took it over when the lease ended; its attempt is the one that counts.
    if (delivery?.state !== 'delivering' || delivery.attempts !== claim.attempt) return;
    const endpoint = await selectEndpointForUpdate(trx, delivery.endpoint_id);
    if (endpoint === undefined) return;
    const succeeded = response.error === null;
    // 410 Gone: the receiver says the endpoint is no more; Standard Webhooks asks senders to stop at once.
    const gone = response.statusCode === 410;
    const nextAt = !succeeded && !gone && claim.attempt < settings.maxAttempts ? new Date(now.getTime() + retryDelayMs(settings, claim.attempt)) : null;
    await insertAttempt(trx, {
      delivery_id: delivery.id,
      attempt: claim.attempt,
      endpoint_id: endpoint.id,
      event_id: claim.event.id,
      event_type: claim.event.type,
      attempted_at: claim.attemptedAt,
      succeeded,
      status_code: response.statusCode,
      latency_ms: response.latencyMs,
      error: response.error,
      response_excerpt: response.excerpt,
      next_attempt_at: nextAt,
    });
    if (succeeded) {
      await updateDelivery(trx, delivery.id, { state: 'succeeded', due_at: null });
      await updateEndpoint(trx, endpoint.id, { consecutive_failures: 0, failing_since: null });
    } else {
      const failingSince = endpoint.failing_since ?? claim.attemptedAt;
      const firstAttemptAt = delivery.first_attempt_at ?? claim.attemptedAt;
      // Disabled only when this event used every attempt and nothing reached the endpoint since its first one:
      // a burst of failures while a receiver restarts never disables it.
      const disable = endpoint.enabled && (gone || (nextAt === null && failingSince <= firstAttemptAt));
      await updateEndpoint(trx, endpoint.id, {
        consecutive_failures: endpoint.consecutive_failures + 1,
        failing_since: failingSince,
        ...(disable
          ? {
              enabled: false,
              disabled_at: now,
              updated_at: now,
              disabled_reason: gone
                ? `Disabled because the endpoint answered 410 Gone to event ${claim.event.id}`
                : `Disabled after event ${claim.event.id} failed all ${settings.maxAttempts} attempts with no successful delivery since ${firstAttemptAt.toISOString()}; last attempt: ${response.error ?? 'failed'}`,
            }
          : {}),
      });
      if (nextAt !== null) {
        await updateDelivery(trx, delivery.id, { state: 'pending', due_at: nextAt });
      } else {
        await updateDelivery(trx, delivery.id, { state: 'failed', due_at: null });
      }
      if (disable) deps.log.info({ webhookId: endpoint.id, eventId: claim.event.id }, 'webhook endpoint disabled after failed deliveries');
    }
    deps.log.info(
      { deliveryId: delivery.id, eventId: claim.event.id, attempt: claim.attempt, statusCode: response.statusCode, succeeded },
      'webhook attempt recorded',
    );
  });
}
