import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { PostValidation } from '../api-types.js';
import { captionLengths, findViolationPerTarget } from '../platforms/index.js';
import { ownedTargets, type ValidatedPostCreateInput } from './create-post.js';

/**
 * A dry run of createPost: the same checks in the same order (a 400 or 403 is the same answer),
 * but the platform limits are reported per target, with each caption's counted length, instead of
 * refusing the first. Nothing is written.
 */
export async function validatePost(db: Kysely<Database>, userId: string, input: ValidatedPostCreateInput, now: Date): Promise<PostValidation> {
  const targets = await db.transaction().execute((trx) => ownedTargets(trx, userId, input, now));
  const problems = findViolationPerTarget(targets);
  return {
    valid: problems.every((problem) => problem === null),
    targets: targets.map((target, index) => ({
      accountId: target.accountId,
      platform: target.platform,
      caption: target.caption,
      lengths: captionLengths(target),
      problem: problems[index] ?? null,
    })),
  };
}
