import type { Kysely } from 'kysely';
import type { AccountRow } from '../../db/queries/accounts.js';
import type { MediaRow } from '../../db/queries/media.js';
import type { PostRow } from '../../db/queries/posts.js';
import {
  insertPartsIfMissing,
  lockAccountPacing,
  markNeedsReconnect,
  selectAccountsByIds,
  selectMediaOfPost,
  selectNextDuePostForUpdate,
  selectPartsOfTarget,
  selectPostForUpdate,
  selectTargetsOfPost,
  updateAccount,
  updatePart,
  updatePost,
  updateTarget,
  updateTargetOfAttempt,
  type PartRow,
  type TargetRow,
} from '../../db/queries/publishing.js';
import type { Database } from '../../db/schema.js';
import type { MediaToPublish, PublishHooks, PublishOutcome, PublishRequest } from '../ports/publisher.js';
import { errorName } from '../errors.js';
import { toMediaFacts } from '../media/media-view.js';
import { publicMediaUrl } from '../media/public-media.js';
import type { Dependencies } from '../dependencies.js';
import { emitPublishingEvents, type PublishingChange } from '../webhooks/events.js';
import { partTexts } from './parts.js';
import { accountsOutOfReach } from './reach.js';
import { summarisePostStatus } from './status.js';
import {
  claimStep,
  failedForGood,
  nextCheckAfterOutcome,
  nextCheckAt,
  outcomeOfReconciliation,
  outcomeValues,
  partResult,
  publisherThrew,
  settledEventOf,
  standing,
  tooLateBy,
} from './target-machine.js';
import { refreshCredentials } from './token-source.js';

/*
 * One publication of a due post, in three steps: claim its targets (in the post's lock), call
 * their platforms (no lock held), record each outcome (in the post's lock again). What each step
 * decides is target-machine.ts's; this file reads and writes what those decisions need.
 */

/** A target a worker holds: the attempt it made, and what it needs to call the platform. */
interface ClaimedTarget {
  target: TargetRow;
  attempt: number;
  account: AccountRow;
  parts: PartRow[];
}

interface Claim {
  post: PostRow;
  targets: ClaimedTarget[];
  media: MediaRow[];
}

/**
 * Acts on the next due post no other worker holds: `published` when it took targets and called
 * their platforms, `settled` when it found nothing to take after all (another worker took them
 * in between), `none` when no post is due.
 */
export async function publishNextDuePost(deps: Dependencies): Promise<'published' | 'settled' | 'none'> {
  const taken = await takeNextDuePost(deps);
  if (taken === 'none' || taken === 'settled') return taken;
  await taken.publish();
  return 'published';
}

/** As publishNextDuePost, returning once the targets are taken: `publish` then calls their platforms. */
export async function takeNextDuePost(deps: Dependencies): Promise<'settled' | 'none' | { publish(): Promise<void> }> {
  const claim = await deps.db.transaction().execute(async (trx) => {
    const post = await selectNextDuePostForUpdate(trx, deps.now());
    return post === undefined ? undefined : claimTargets(trx, deps, post);
  });
  if (claim === undefined) return 'none';
  if (claim === null) return 'settled';
  return { publish: () => publishClaim(deps, claim) };
}

/**
 * Inside the post's lock: settles the targets that cannot go out (a disconnected account, one the
 * post's owner no longer reaches, a post too late), takes the ones that can, records the attempt
 * before any platform call, and sets when a worker next looks at the post: the next time
 * something is due (a lease running out is such a time, so a worker that dies mid-call is followed
 * up). Null when nothing could be taken now.
 */
async function claimTargets(trx: Kysely<Database>, deps: Dependencies, post: PostRow): Promise<Claim | null> {
  const now = deps.now();
  // A next_check_at that no longer matches the post (it was edited in between) is put right, so it is not taken again.
  if (post.status !== 'scheduled' && post.status !== 'publishing') {
    await updatePost(trx, post.id, { next_check_at: null });
    return null;
  }
  if (post.scheduled_at === null || post.scheduled_at > now) {
    await updatePost(trx, post.id, { next_check_at: post.scheduled_at });
    return null;
  }

  const targets = await selectTargetsOfPost(trx, post.id);
  const accounts = new Map(
    (
      await selectAccountsByIds(
        trx,
        targets.map((t) => t.account_id),
      )
    ).map((a) => [a.id, a]),
  );
  // Live accounts are paced: their pacing is read under a lock, so concurrent claims take turns.
  const live = [...accounts.values()].filter((a) => a.mode === 'live').map((a) => a.id);
  for (const [id, nextPublishAt] of await lockAccountPacing(trx, live)) {
    const account = accounts.get(id);
    if (account !== undefined) account.next_publish_at = nextPublishAt;
  }
  const outOfReach = await accountsOutOfReach(trx, post.user_id, [...accounts.values()]);
  const lateBy = tooLateBy({ status: post.status, scheduled_at: post.scheduled_at }, now, deps.settings);
  const claimed: ClaimedTarget[] = [];
  const wakeTimes: Date[] = [];
  const settledTargets: PublishingChange['settledTargets'] = [];

  for (const target of targets) {
    const account = accounts.get(target.account_id);
    if (account === undefined) throw new Error(`account ${target.account_id} of ${post.id} is missing`);
    const step = claimStep(target, account, { now, outOfReach: outOfReach.has(account.id), lateBy, settings: deps.settings });
    if (step.kind === 'wait') {
      if (step.wakeAt !== null) wakeTimes.push(step.wakeAt);
      continue;
    }
    if (step.kind === 'refuse') {
      await updateTarget(trx, post.id, target.account_id, step.values);
      Object.assign(target, step.values);
      settledTargets.push({ accountId: target.account_id, type: 'target.failed' });
      continue;
    }
    const publisher = deps.publishers.for(account);
    const texts = partTexts({ caption: target.caption_override ?? post.caption, threadParts: target.thread_parts, firstComment: post.first_comment });
    // Material is chosen once, before the first call, and kept: every retry repeats the same call.
    await insertPartsIfMissing(
      trx,
      texts.map((_, position) => {
        const material = publisher?.newPartMaterial(now) ?? { key: `${post.id}.${target.account_id}.${position}`, createdAt: now.toISOString() };
        return {
          post_id: post.id,
          account_id: target.account_id,
          position,
          material_key: material.key,
          material_created_at: material.createdAt,
          platform_post_id: null,
          url: null,
          cid: null,
          published_at: null,
        };
      }),
    );
    await updateTarget(trx, post.id, target.account_id, step.values);
    Object.assign(target, step.values);
    if (step.nextPublishAt !== null) await updateAccount(trx, account.id, { next_publish_at: step.nextPublishAt });
    wakeTimes.push(step.wakeAt);
    claimed.push({ target, attempt: step.values.attempts, account, parts: await selectPartsOfTarget(trx, post.id, target.account_id) });
  }

  const status = summarisePostStatus(targets.map(standing));
  await updatePost(trx, post.id, { status, updated_at: now, next_check_at: nextCheckAt(status, wakeTimes) });
  await emitPublishingEvents(trx, { post: { ...post, status, updated_at: now }, previousStatus: post.status, settledTargets, needsReconnect: [] }, now);
  if (claimed.length === 0) return null;
  return { post: { ...post, status }, targets: claimed, media: await selectMediaOfPost(trx, post.id) };
}

/** Calls the platforms for every target taken, side by side, and records each outcome. Never throws. */
async function publishClaim(deps: Dependencies, claim: Claim): Promise<void> {
  await Promise.all(claim.targets.map((claimed) => publishTarget(deps, claim, claimed)));
}

async function publishTarget(deps: Dependencies, claim: Claim, claimed: ClaimedTarget): Promise<void> {
  const { post } = claim;
  const { target, account, attempt } = claimed;
  const outcome = await callPlatform(deps, claim, claimed).catch((error: unknown): PublishOutcome => {
    deps.log.error({ postId: post.id, accountId: account.id, errorName: errorName(error) }, 'publisher threw');
    return publisherThrew();
  });
  // Nothing after the platform call may fail the step that made it: if this write fails, the target
  // stays publishing, its lease runs out, and the next attempt repeats the same (idempotent) call.
  await recordOutcome(deps, post.id, target, account, attempt, outcome).catch((error: unknown) => {
    deps.log.error(
      { postId: post.id, accountId: account.id, errorName: errorName(error) },
      'could not record a publishing outcome; the target will be retried when its lease ends',
    );
  });
}

async function callPlatform(deps: Dependencies, claim: Claim, claimed: ClaimedTarget): Promise<PublishOutcome> {
  const { post } = claim;
  const { target, account, parts } = claimed;
  const publisher = deps.publishers.for(account);
  if (publisher === undefined) {
    return failedForGood('system_error', `This Herald cannot publish to ${account.platform} ${account.mode} accounts`);
  }
  let credentials: unknown = null;
  if (account.mode === 'live') {
    if (account.credentials === null) return failedForGood('auth_expired', 'The account has no stored credentials; connect it again');
    try {
      credentials = deps.vault.open(account.credentials);
    } catch (error) {
      return failedForGood('system_error', error instanceof Error ? error.message : 'The stored credentials cannot be read');
    }
  }
  let version = account.credentials_version;
  const texts = partTexts({ caption: target.caption_override ?? post.caption, threadParts: target.thread_parts, firstComment: post.first_comment });
  const media = claim.media.map((row) => toMediaToPublish(deps, row));
  const request: PublishRequest<unknown> = {
    account: { id: account.id, platform: account.platform, username: account.username, platformUserId: account.platform_user_id },
    credentials,
    parts: parts.map((part) => ({
      index: part.position,
      text: texts[part.position] ?? '',
      media: part.position === 0 ? media : [],
      material: { key: part.material_key, createdAt: part.material_created_at },
      published: part.platform_post_id === null ? null : { platformPostId: part.platform_post_id, url: part.url, cid: part.cid },
      progress: part.progress,
    })),
    postType: post.post_type,
    fields: target.fields ?? {},
    firstAttemptAt: target.first_attempt_at ?? deps.now(),
    inDoubt: target.in_doubt,
    now: deps.now(),
  };
  const hooks: PublishHooks<unknown> = {
    async refreshCredentials(refresh) {
      const refreshed = await refreshCredentials(deps, account.id, version, refresh, publisher.credentialsEndAt?.bind(publisher));
      version = refreshed.version;
      return refreshed.credentials;
    },
    async partPublished(index, part) {
      await updatePart(deps.db, { postId: post.id, accountId: account.id, position: index }, partResult(part, deps.now())).catch((error: unknown) => {
        deps.log.error({ postId: post.id, accountId: account.id, errorName: errorName(error) }, 'could not record a published part');
      });
    },
    async partProgressed(index, progress) {
      await updatePart(deps.db, { postId: post.id, accountId: account.id, position: index }, { progress }).catch((error: unknown) => {
        deps.log.error({ postId: post.id, accountId: account.id, errorName: errorName(error) }, "could not record a part's progress");
      });
    },
  };
  // In doubt: what the platform holds is asked before anything is sent again.
  const doubted = request.inDoubt && publisher.reconcile !== undefined ? request.parts.find((part) => part.published === null) : undefined;
  if (doubted !== undefined && publisher.reconcile !== undefined) {
    const found = await publisher.reconcile(request, doubted, hooks);
    const ended = outcomeOfReconciliation(found);
    if (ended !== null) return ended;
    if (found.kind === 'found') {
      await hooks.partPublished(doubted.index, found.part);
      doubted.published = found.part;
    }
    // Found: settled. Absent: still in doubt, so a platform's duplicate refusal may be the earlier attempt's post after all.
    request.inDoubt = found.kind !== 'found';
  }
  return publisher.publish(request, hooks);
}

function toMediaToPublish(deps: Pick<Dependencies, 'storage' | 'publicMedia'>, row: MediaRow): MediaToPublish {
  return {
    ...toMediaFacts(row),
    altText: row.alt_text,
    open: async (range) => {
      if (row.storage_key === null) throw new Error(`Media ${row.id} has no stored file to publish`);
      return deps.storage.open(row.storage_key, range);
    },
    publicUrl: (expiresAt) => publicMediaUrl(deps.publicMedia, row.id, expiresAt),
  };
}

/** Writes one target's outcome over the attempt that made it, and the post's status, in the post's lock. */
async function recordOutcome(
  deps: Dependencies,
  postId: string,
  target: TargetRow,
  account: AccountRow,
  attempt: number,
  outcome: PublishOutcome,
): Promise<void> {
  const now = deps.now();
  await deps.db.transaction().execute(async (trx) => {
    const post = await selectPostForUpdate(trx, postId);
    if (post === undefined) return;
    const values = outcomeValues(deps.settings, target, outcome, now);
    if (!(await updateTargetOfAttempt(trx, postId, account.id, attempt, values))) return;
    if (outcome.kind === 'published') {
      for (const [index, part] of outcome.parts.entries()) {
        await updatePart(trx, { postId, accountId: account.id, position: index }, partResult(part, now));
      }
    }
    const needsReconnect = [];
    if (outcome.kind === 'failed' && outcome.credentialsRevoked) {
      const changed = await markNeedsReconnect(trx, account.id, outcome.message);
      if (changed !== undefined) needsReconnect.push(changed);
    }
    if (outcome.kind === 'failed' && outcome.retryAfter !== null) {
      await updateAccount(trx, account.id, { next_publish_at: outcome.retryAfter });
    }
    const targets = await selectTargetsOfPost(trx, postId);
    const status = summarisePostStatus(targets.map(standing));
    const nextCheck = nextCheckAfterOutcome(status, values, outcome, targets, now);
    await updatePost(trx, postId, { status, updated_at: now, ...(nextCheck === undefined ? {} : { next_check_at: nextCheck }) });
    const settled = settledEventOf(values);
    await emitPublishingEvents(
      trx,
      {
        post: { ...post, status, updated_at: now },
        previousStatus: post.status,
        settledTargets: settled === null ? [] : [{ accountId: account.id, type: settled }],
        needsReconnect,
      },
      now,
    );
    deps.log.info({ postId, accountId: account.id, outcome: outcome.kind, status }, 'publishing outcome recorded');
  });
}
