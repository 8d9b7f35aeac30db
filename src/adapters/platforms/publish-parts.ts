import type { PartToPublish, PublishedPart, PublishHooks, PublishOutcome, PublishRequest } from '../../domain/ports/publisher.js';
import { outcomeOfThrown } from './http-outcomes.js';

/**
 * The parts not yet published, in order, each made by `one` (given the parts done so far: a reply
 * or comment names the first) and recorded as soon as it is made; the first outcome that is not a
 * part (pending, a failure) ends the look. Never throws: a Halt is its outcome.
 */
export async function publishParts<C>(
  request: PublishRequest<C>,
  hooks: PublishHooks<C>,
  platform: string,
  one: (part: PartToPublish, done: readonly PublishedPart[]) => Promise<PublishedPart | PublishOutcome>,
): Promise<PublishOutcome> {
  const done: PublishedPart[] = [];
  try {
    for (const part of request.parts) {
      if (part.published !== null) {
        done.push(part.published);
        continue;
      }
      const made = await one(part, done);
      if (!('platformPostId' in made)) return made;
      await hooks.partPublished(part.index, made);
      done.push(made);
    }
  } catch (error) {
    return outcomeOfThrown(error, platform);
  }
  return { kind: 'published', parts: done };
}
