import type { Kysely } from 'kysely';
import { selectActiveAccountsForUser, type AccountRow } from '../../data/queries/accounts.js';
import { selectMediaOwnedBy, type MediaRow } from '../../data/queries/media.js';
import { insertPostWithTargets } from '../../data/queries/posts.js';
import type { Database } from '../../data/schema.js';
import type { PostCreateInput, PostCreateResult } from '../api-types.js';
import { DomainError, invalidRequest } from '../errors.js';
import { newId } from '../ids.js';
import { toMediaFacts } from '../media/media-view.js';
import { findPlatformViolation, type MediaFacts, type TargetToCheck } from '../platforms/index.js';
import { findInputProblems } from './input-rules.js';

/**
 * Creates a post in the interface's order of checks: the input (400 with details), platform limits
 * (400), ownership (403); only then is anything written, in one transaction.
 */
export async function createPost(db: Kysely<Database>, userId: string, input: PostCreateInput, now: Date): Promise<PostCreateResult> {
  const problems = findInputProblems(input, now);
  if (problems.length > 0) throw invalidRequest(problems);

  const mediaIds = input.mediaIds ?? [];
  const accounts = await selectActiveAccountsForUser(db, userId, input.accountIds);
  const media = await selectMediaOwnedBy(db, userId, mediaIds);

  // Only the caller's own accounts and media take part, so a limit message reveals nothing about anyone else's.
  const violation = findPlatformViolation(targetsToCheck(input, accounts, media));
  if (violation !== null) throw new DomainError('platform_limit', violation);

  const accountIdsFound = new Set(accounts.map((a) => a.id));
  const foreignAccount = input.accountIds.find((id) => !accountIdsFound.has(id));
  if (foreignAccount !== undefined) throw new DomainError('forbidden', `Account not accessible: ${foreignAccount}`);
  const mediaIdsFound = new Set(media.map((m) => m.id));
  const foreignMedia = mediaIds.find((id) => !mediaIdsFound.has(id));
  if (foreignMedia !== undefined) throw new DomainError('forbidden', `Media not accessible: ${foreignMedia}`);

  const postId = newId('post');
  const status = input.scheduledAt === undefined ? 'draft' : 'scheduled';
  const overrides = new Map((input.accountOverrides ?? []).map((o) => [o.accountId, o]));
  await insertPostWithTargets(db, {
    post: {
      id: postId,
      user_id: userId,
      caption: input.caption ?? null,
      first_comment: input.firstComment ?? null,
      post_type: input.postType ?? 'post',
      status,
      scheduled_at: input.scheduledAt === undefined ? null : new Date(input.scheduledAt),
    },
    targets: input.accountIds.map((accountId, position) => {
      const override = overrides.get(accountId);
      return {
        post_id: postId,
        account_id: accountId,
        position,
        caption_override: override?.captionOverride ?? null,
        fields: JSON.stringify(override?.fields ?? null),
        thread_parts: JSON.stringify(input.threadParts?.[accountId] ?? null),
      };
    }),
    media: mediaIds.map((mediaId, position) => ({ post_id: postId, media_id: mediaId, position })),
  });
  return { id: postId, status };
}

function targetsToCheck(input: PostCreateInput, accounts: AccountRow[], media: MediaRow[]): TargetToCheck[] {
  const byId = new Map(accounts.map((a) => [a.id, a]));
  const mediaById = new Map(media.map((m) => [m.id, m]));
  const facts: MediaFacts[] = (input.mediaIds ?? []).flatMap((id) => {
    const row = mediaById.get(id);
    return row ? [toMediaFacts(row)] : [];
  });
  const overrides = new Map((input.accountOverrides ?? []).map((o) => [o.accountId, o]));
  return input.accountIds.flatMap((accountId) => {
    const account = byId.get(accountId);
    if (!account) return [];
    const override = overrides.get(accountId);
    return [
      {
        accountId,
        platform: account.platform,
        postType: input.postType ?? 'post',
        caption: override?.captionOverride ?? input.caption ?? null,
        firstComment: input.firstComment ?? null,
        media: facts,
        threadParts: input.threadParts?.[accountId] ?? null,
        fields: override?.fields ?? null,
      },
    ];
  });
}
