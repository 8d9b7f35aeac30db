import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { PartMaterial, PublishedPart, Publisher, PublishOutcome, PublishRequest } from '../../domain/ports/publisher.js';

export const SANDBOX_URL_BASE = 'https://sandbox.herald.invalid';

/**
 * The sandbox platform: Herald's own outbox table. Each part's material key is its outbox
 * primary key, so publishing a part twice finds the first row instead of writing a second one:
 * the same exactly-once road as a real platform, with no network.
 */
export function createSandboxPublisher(db: Kysely<Database>): Publisher {
  return {
    connect: () => Promise.reject(new Error('Sandbox accounts are connected without credentials')),
    newPartMaterial: (now: Date): PartMaterial => ({ key: `sbx_${randomBytes(12).toString('hex')}`, createdAt: now.toISOString() }),
    async publish(request: PublishRequest<unknown>, hooks): Promise<PublishOutcome> {
      const published: PublishedPart[] = [];
      try {
        for (const part of request.parts) {
          if (part.published !== null) {
            published.push(part.published);
            continue;
          }
          const id = part.material.key;
          await db
            .insertInto('sandbox_outbox')
            .values({
              platform_post_id: id,
              account_id: request.account.id,
              position: part.index,
              platform: request.account.platform,
              username: request.account.username,
              text: part.text,
              media_ids: JSON.stringify(part.media.map((m) => m.id)),
              reply_to: published.at(-1)?.platformPostId ?? null,
            })
            .onConflict((oc) => oc.column('platform_post_id').doNothing())
            .execute();
          const result = {
            platformPostId: id,
            url: `${SANDBOX_URL_BASE}/${request.account.platform}/${encodeURIComponent(request.account.username)}/${id}`,
            cid: null,
          };
          await hooks.partPublished(part.index, result);
          published.push(result);
        }
      } catch {
        // The outbox is a database write: if it failed we cannot know whether it committed, and a repeat is safe.
        return {
          kind: 'failed',
          category: 'system_error',
          message: 'The sandbox outbox could not be written',
          retryable: true,
          retryAfter: null,
          mayHaveCommitted: true,
          credentialsRevoked: false,
        };
      }
      return { kind: 'published', parts: published };
    },
  };
}
