import type { Kysely, Transaction } from 'kysely';
import { selectActiveAccountsForUser, type ReachableAccount } from '../../db/queries/accounts.js';
import { selectMediaOwnedByForKeyShare, type MediaFactsRow } from '../../db/queries/media.js';
import { insertPostWithTargets, type NewPost } from '../../db/queries/posts.js';
import type { Database } from '../../db/schema.js';
import type { KeepWithWork } from '../idempotency.js';
import type { PostCreateInput, PostCreateResult, PostType } from '../api-types.js';
import { DomainError, invalidRequest } from '../errors.js';
import { isWellFormedId, newId } from '../ids.js';
import { toMediaFacts } from '../media/media-view.js';
import { findPlatformViolation, type MediaFacts, type TargetToCheck } from '../platforms/index.js';
import { missingLiveFields } from '../platforms/live.js';
import { findInputProblems } from './input-rules.js';

/** A create request as the validator hands it on: the schema's defaults are already filled in. */
export type ValidatedPostCreateInput = PostCreateInput & { postType: PostType };

/**
 * Creates a post after the create checks, due for a worker at its scheduledAt: the checks and the
 * write are one transaction, which keeps the answer for an Idempotency-Key (`keep`) too.
 */
export async function createPost(
  db: Kysely<Database>,
  userId: string,
  input: ValidatedPostCreateInput,
  now: Date,
  keep?: KeepWithWork<PostCreateResult>,
): Promise<PostCreateResult> {
  return db.transaction().execute(async (trx) => {
    await checkPost(trx, userId, input, now);
    const postId = newId('post');
    const scheduledAt = input.scheduledAt === undefined ? null : new Date(input.scheduledAt);
    const status = scheduledAt === null ? 'draft' : 'scheduled';
    await insertPostWithTargets(trx, {
      post: {
        id: postId,
        user_id: userId,
        caption: input.caption ?? null,
        first_comment: input.firstComment ?? null,
        post_type: input.postType,
        status,
        scheduled_at: scheduledAt,
        next_check_at: scheduledAt,
      },
      ...postContents(postId, input),
    });
    const result: PostCreateResult = { id: postId, status };
    await keep?.(trx, result);
    return result;
  });
}

/**
 * The create checks after the schema, in the interface's order: cross-field rules (400 with
 * details), ownership of every account and media id (403), platform limits (400). The media rows
 * stay locked against deletion until the transaction ends, so the post that passed holds them.
 */
export async function checkPost(trx: Transaction<Database>, userId: string, input: ValidatedPostCreateInput, now: Date): Promise<void> {
  const violation = findPlatformViolation(await ownedTargets(trx, userId, input, now));
  if (violation !== null) throw new DomainError('platform_limit', violation);
}

/**
 * The checks before the platform limits (cross-field rules, then ownership), and the targets as
 * the limits see them: every id in them is the caller's, so the limits judge the whole request.
 */
export async function ownedTargets(trx: Transaction<Database>, userId: string, input: ValidatedPostCreateInput, now: Date): Promise<TargetToCheck[]> {
  const problems = findInputProblems(input, now);
  if (problems.length > 0) throw invalidRequest(problems);
  const mediaIds = input.mediaIds ?? [];
  // A malformed id (one holding NUL, say) cannot exist, so it is not looked up: it is simply not the caller's.
  const accounts = await selectActiveAccountsForUser(
    trx,
    userId,
    input.accountIds.filter((id) => isWellFormedId('acc', id)),
  );
  const media = await selectMediaOwnedByForKeyShare(
    trx,
    userId,
    mediaIds.filter((id) => isWellFormedId('med', id)),
  );

  const accountsFound = new Set(accounts.map((a) => a.id));
  const foreignAccount = input.accountIds.find((id) => !accountsFound.has(id));
  if (foreignAccount !== undefined) throw new DomainError('forbidden', `Account not accessible: ${foreignAccount}`);
  const mediaFound = new Set(media.map((m) => m.id));
  const foreignMedia = mediaIds.find((id) => !mediaFound.has(id));
  if (foreignMedia !== undefined) throw new DomainError('forbidden', `Media not accessible: ${foreignMedia}`);
  const missing = missingLiveFields(accounts, input.accountOverrides ?? []);
  if (missing.length > 0) throw invalidRequest(missing);

  return targetsToCheck(input, accounts, media);
}

/** The target and media rows of a checked post. */
export function postContents(postId: string, input: ValidatedPostCreateInput): Pick<NewPost, 'targets' | 'media'> {
  const overrides = new Map((input.accountOverrides ?? []).map((o) => [o.accountId, o]));
  return {
    targets: input.accountIds.map((accountId, position) => {
      const override = overrides.get(accountId);
      return {
        post_id: postId,
        account_id: accountId,
        position,
        caption_override: override?.captionOverride ?? null,
        fields: override?.fields ?? null,
        thread_parts: input.threadParts?.[accountId] ?? null,
      };
    }),
    media: (input.mediaIds ?? []).map((mediaId, position) => ({ post_id: postId, media_id: mediaId, position })),
  };
}

/** One target per account, with the media in request order; every id has been found. */
function targetsToCheck(input: ValidatedPostCreateInput, accounts: ReachableAccount[], media: MediaFactsRow[]): TargetToCheck[] {
  const accountById = new Map(accounts.map((a) => [a.id, a]));
  const mediaById = new Map(media.map((m) => [m.id, m]));
  const facts: MediaFacts[] = (input.mediaIds ?? []).map((id) => toMediaFacts(found(mediaById, id)));
  const overrides = new Map((input.accountOverrides ?? []).map((o) => [o.accountId, o]));
  return input.accountIds.map((accountId) => {
    const override = overrides.get(accountId);
    return {
      accountId,
      platform: found(accountById, accountId).platform,
      postType: input.postType,
      caption: override?.captionOverride ?? input.caption ?? null,
      firstComment: input.firstComment ?? null,
      media: facts,
      threadParts: input.threadParts?.[accountId] ?? null,
      fields: override?.fields ?? null,
    };
  });
}

function found<T>(rows: ReadonlyMap<string, T>, id: string): T {
  const row = rows.get(id);
  if (row === undefined) throw new Error(`${id} was checked as found but is missing`);
  return row;
}
