import type { AttemptRow, EndpointRow } from '../../db/queries/webhooks.js';
import type { Webhook, WebhookDelivery } from '../api-types.js';

/** A stored endpoint as the API shows it, never with a secret; a previous secret that no longer signs is not mentioned. */
export function toWebhookView(row: EndpointRow, now: Date): Webhook {
  const previousExpiresAt = row.previous_secret !== null ? row.previous_secret_expires_at : null;
  return {
    id: row.id,
    url: row.url,
    eventTypes: row.event_types,
    description: row.description,
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    disabledAt: row.disabled_at?.toISOString() ?? null,
    consecutiveFailures: row.consecutive_failures,
    previousSecretExpiresAt: previousExpiresAt !== null && previousExpiresAt > now ? previousExpiresAt.toISOString() : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function toDeliveryView(row: AttemptRow): WebhookDelivery {
  return {
    eventId: row.event_id,
    eventType: row.event_type,
    attempt: row.attempt,
    attemptedAt: row.attempted_at.toISOString(),
    succeeded: row.succeeded,
    statusCode: row.status_code,
    latencyMs: row.latency_ms,
    error: row.error,
    responseExcerpt: row.response_excerpt,
    nextAttemptAt: row.next_attempt_at?.toISOString() ?? null,
  };
}
