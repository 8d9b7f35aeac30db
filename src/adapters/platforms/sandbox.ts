import { randomBytes } from 'node:crypto';
import type { Insertable, Kysely } from 'kysely';
import type { Database, SandboxOutboxTable } from '../../db/schema.js';
import type { PartMaterial, PublishedPart, Publisher, PublishOutcome, PublishRequest } from '../../domain/ports/publisher.js';

export const SANDBOX_URL_BASE = 'https://sandbox.herald.invalid';

type OutboxRow = Insertable<SandboxOutboxTable>;

/** What publishing a request writes to the outbox (its parts not yet published), and the parts it then holds, in order. */
function outboxOf(request: PublishRequest<unknown>): { parts: { index: number; row: OutboxRow | null; result: PublishedPart }[] } {
  let previous: PublishedPart | undefined;
  const parts = request.parts.map((part) => {
    if (part.published !== null) {
      previous = part.published;
      return { index: part.index, row: null, result: part.published };
    }
    const id = part.material.key;
    const row: OutboxRow = {
      platform_post_id: id,
      account_id: request.account.id,
      position: part.index,
      platform: request.account.platform,
      username: request.account.username,
      text: part.text,
      media_ids: JSON.stringify(part.media.map((m) => m.id)),
      reply_to: previous?.platformPostId ?? null,
    };
    previous = { platformPostId: id, url: `${SANDBOX_URL_BASE}/${request.account.platform}/${encodeURIComponent(request.account.username)}/${id}`, cid: null };
    return { index: part.index, row, result: previous };
  });
  return { parts };
}

/** Writes outbox rows; a part's key is the row's primary key, so a row written before is found, not written again. */
async function writeOutbox(db: Kysely<Database>, rows: OutboxRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('sandbox_outbox')
    .values(rows)
    .onConflict((oc) => oc.column('platform_post_id').doNothing())
    .execute();
}

/**
 * The sandbox platform: Herald's own outbox table. Each part's material key is its outbox
 * primary key, so publishing a part twice finds the first row instead of writing a second one.
 * The publishing road writes the outbox in the transaction that records the outcomes
 * (publishWithOutcomes): call and outcome commit together, so a sandbox call is never in doubt.
 * `publish` is the same call on its own, part by part, as a real platform's.
 */
export function createSandboxPublisher(db: Kysely<Database>): Publisher {
  return {
    connect: () => Promise.reject(new Error('Sandbox accounts are connected without credentials')),
    newPartMaterial: (now: Date): PartMaterial => ({ key: `sbx_${randomBytes(12).toString('hex')}`, createdAt: now.toISOString() }),
    async publish(request: PublishRequest<unknown>, hooks): Promise<PublishOutcome> {
      const published: PublishedPart[] = [];
      try {
        for (const { index, row, result } of outboxOf(request).parts) {
          if (row !== null) {
            await writeOutbox(db, [row]);
            await hooks.partPublished(index, result);
          }
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
    async publishWithOutcomes(trx, requests): Promise<PublishOutcome[]> {
      const outboxes = requests.map(outboxOf);
      await writeOutbox(
        trx,
        outboxes.flatMap(({ parts }) => parts.flatMap(({ row }) => (row === null ? [] : [row]))),
      );
      return outboxes.map(({ parts }) => ({ kind: 'published', parts: parts.map(({ result }) => result) }));
    },
  };
}
