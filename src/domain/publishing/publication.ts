import type { Kysely } from 'kysely';
import type { AccountRow } from '../../db/queries/accounts.js';
import type { MediaRow } from '../../db/queries/media.js';
import type { PostRow } from '../../db/queries/posts.js';
import {
  insertPartsIfMissing,
  lockAccountPacing,
  markNeedsReconnect,
  selectAccountsByIds,
  selectDuePostsForUpdate,
  selectMediaOfPosts,
  selectPartsOfPosts,
  renewLease,
  selectPostsForUpdate,
  selectTargetsOfPosts,
  targetKey,
  updateAccountsPacing,
  updatePart,
  updatePartResults,
  updatePosts,
  updateTargets,
  type AttemptKey,
  type DuePostRow,
  type PartRow,
  type PostUpdate,
  type TargetRow,
  type TargetUpdate,
} from '../../db/queries/publishing.js';
import type { Database } from '../../db/schema.js';
import type { MediaToPublish, PublishHooks, PublishOutcome, Publisher, PublishRequest } from '../ports/publisher.js';
import { errorName } from '../errors.js';
import { toMediaFacts } from '../media/media-view.js';
import { publicMediaUrl } from '../media/public-media.js';
import type { Dependencies } from '../dependencies.js';
import { emitPublishingEventsOf, type PublishingChange } from '../webhooks/events.js';
import type { InFlight } from './in-flight.js';
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
  publicationOverdue,
  publisherThrew,
  settledEventOf,
  standing,
  lineOf,
  takeTurn,
  tooLateBy,
  wakeOf,
  type AccountLine,
} from './target-machine.js';
import { refreshCredentials } from './token-source.js';

/*
 * The publication of due posts, many at a time, in three steps: claim their targets (in the
 * posts' locks, one transaction for all of them), call their platforms (no lock held), record each
 * outcome (in the posts' lock again). A platform inside Herald's own database (the sandbox) is
 * called in the claim's transaction, its outcomes written with the call: nothing is left in doubt,
 * and a post on it is published in one transaction. What each step decides is target-machine.ts's;
 * this file reads and writes what those decisions need, each read or write one statement for all
 * the posts in hand.
 */

/** A target a worker holds: the attempt it made, and what it needs to call the platform. */
interface ClaimedTarget {
  target: TargetRow;
  attempt: number;
  account: AccountRow;
  parts: PartRow[];
  /** Gives back the place the call holds among the worker's publications in flight (InFlight), once it settles. */
  release: () => void;
}

interface Claim {
  post: PostRow;
  targets: ClaimedTarget[];
  media: MediaRow[];
}

/** Posts a claim took targets of: `publish` calls their platforms and records the outcomes (never throws). */
export interface TakenPosts {
  posts: number;
  publish(): Promise<void>;
}

/**
 * Acts on up to `limit` due posts no other worker holds: how many it took targets of and called
 * their platforms for, `settled` when it found nothing to take after all (another worker took
 * them in between), `none` when no post is due.
 */
export async function publishDuePosts(deps: Dependencies, limit: number): Promise<number | 'settled' | 'none'> {
  const taken = await takeDuePosts(deps, limit);
  if (typeof taken === 'string') return taken;
  await taken.publish();
  return taken.posts;
}

/** One due post at a time (a step a test can watch): `published` when it took targets of one and called their platforms. */
export async function publishNextDuePost(deps: Dependencies): Promise<'published' | 'settled' | 'none'> {
  const step = await publishDuePosts(deps, 1);
  return typeof step === 'number' ? 'published' : step;
}

/**
 * As publishDuePosts, returning once the targets are taken: `publish` then calls their platforms.
 * With `inFlight`, the worker's publications in flight: a target whose user or platform host has
 * its share of them is passed over, still due.
 */
export async function takeDuePosts(deps: Dependencies, limit: number, inFlight?: InFlight): Promise<'settled' | 'none' | TakenPosts> {
  const held: (() => void)[] = [];
  const hold = (userId: string, account: AccountRow): (() => void) | null => {
    if (inFlight === undefined) return () => undefined;
    const release = inFlight.hold(userId, hostOf(deps, account), account.id);
    if (release !== null) held.push(release);
    return release;
  };
  const claimed = await deps.db
    .transaction()
    .execute(async (trx) => {
      const posts = await selectDuePostsForUpdate(trx, deps.now(), limit, inFlight?.passOver());
      return posts.length === 0 ? undefined : claimTargets(trx, deps, posts, hold);
    })
    .catch((error: unknown) => {
      // Nothing was taken: the places held for it are given back.
      for (const release of held) release();
      throw error;
    });
  if (claimed === undefined) return 'none';
  if (claimed.posts === 0) return 'settled';
  const { claims } = claimed;
  return { posts: claimed.posts, publish: () => publishClaims(deps, claims) };
}

/** Groups rows by a key, keeping their order. */
function groupBy<T, K = string>(rows: readonly T[], key: (row: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const row of rows) {
    const group = groups.get(key(row));
    if (group === undefined) groups.set(key(row), [row]);
    else group.push(row);
  }
  return groups;
}

/** What a claim did: the posts it took targets of, and what is left to call (targets of platforms outside Herald's database). */
interface Claimed {
  posts: number;
  claims: Claim[];
}

/** A target taken, before its platform is called. */
interface Taking {
  post: PostRow;
  target: TargetRow;
  account: AccountRow;
  attempt: number;
  attemptedBefore: boolean;
  release: () => void;
}

/**
 * Inside the posts' locks: settles the targets that cannot go out (a disconnected account, one the
 * post's owner no longer reaches, a post too late), takes the ones that can, records the attempts
 * before any platform call, and sets when a worker next looks at each post: the next time
 * something is due (a lease running out is such a time, so a worker that dies mid-call is followed
 * up). Targets of a platform inside Herald's database (the sandbox) are published here too, their
 * call and outcome written in this transaction: nothing of them is left to a lease.
 */
async function claimTargets(
  trx: Kysely<Database>,
  deps: Dependencies,
  due: DuePostRow[],
  hold: (userId: string, account: AccountRow) => (() => void) | null,
): Promise<Claimed> {
  const now = deps.now();
  const postUpdates: PostUpdate[] = [];
  const posts = due.flatMap(({ has_media, ...post }) => {
    // A next_check_at that no longer matches the post (it was edited in between) is put right, so it is not taken again.
    if (post.status !== 'scheduled' && post.status !== 'publishing') postUpdates.push({ id: post.id, nextCheckAt: null });
    else if (post.scheduled_at === null || post.scheduled_at > now) postUpdates.push({ id: post.id, nextCheckAt: post.scheduled_at });
    else return [{ post: { ...post, scheduled_at: post.scheduled_at }, hasMedia: has_media }];
    return [];
  });

  const targetsOf = groupBy(
    await selectTargetsOfPosts(
      trx,
      posts.map(({ post }) => post.id),
    ),
    (t) => t.post_id,
  );
  const accountIds = [...new Set([...targetsOf.values()].flat().map((t) => t.account_id))];
  const accounts = new Map((await selectAccountsByIds(trx, accountIds)).map((a) => [a.id, a]));
  // Live accounts are paced: their pacing is read under a lock, so concurrent claims take turns.
  const live = [...accounts.values()].filter((a) => a.mode === 'live').map((a) => a.id);
  for (const pacing of await lockAccountPacing(trx, live)) {
    const account = accounts.get(pacing.id);
    if (account !== undefined) Object.assign(account, pacing);
  }
  const outOfReach = new Map<string, Set<string>>();
  for (const [userId, ofUser] of groupBy(posts, ({ post }) => post.user_id)) {
    const reached = new Set(ofUser.flatMap(({ post }) => (targetsOf.get(post.id) ?? []).map((t) => t.account_id)));
    outOfReach.set(
      userId,
      await accountsOutOfReach(
        trx,
        userId,
        [...reached].flatMap((id) => accounts.get(id) ?? []),
      ),
    );
  }

  const targetUpdates = new Map<string, TargetUpdate>();
  // Live accounts whose pacing this claim moves on: their next publication, or their line of held-back posts.
  const paced = new Map<string, AccountRow>();
  const lines = new Map<string, AccountLine>();
  const waits = new Map<string, Date[]>();
  const settled = new Map<string, PublishingChange['settledTargets']>();
  const taken: Taking[] = [];
  for (const { post } of posts) {
    const lateBy = tooLateBy(post, now, deps.settings);
    const wakeTimes: Date[] = [];
    const settledTargets: PublishingChange['settledTargets'] = [];
    for (const target of targetsOf.get(post.id) ?? []) {
      const account = accounts.get(target.account_id);
      if (account === undefined) throw new Error(`account ${target.account_id} of ${post.id} is missing`);
      const step = claimStep(target, account, { now, outOfReach: outOfReach.get(post.user_id)?.has(account.id) ?? false, lateBy, settings: deps.settings });
      if (step.kind === 'held') {
        const line = lines.get(account.id) ?? lineOf(account, now);
        lines.set(account.id, line);
        // A post no claim has looked at yet is still scheduled: it joins the line.
        wakeTimes.push(takeTurn(line, post.status === 'scheduled', now, deps.settings.liveSpacingMs));
        account.last_turn_at = line.back;
        paced.set(account.id, account);
        continue;
      }
      if (step.kind === 'wait') {
        if (step.wakeAt !== null) wakeTimes.push(step.wakeAt);
        continue;
      }
      // A call outside Herald's database waits, still due, while its user or platform host has its share in flight.
      const release = step.kind === 'take' && !callsInDatabase(deps, account) ? hold(post.user_id, account) : () => undefined;
      if (release === null) {
        wakeTimes.push(now);
        continue;
      }
      const attemptedBefore = target.attempts > 0;
      targetUpdates.set(targetKey(post.id, target.account_id), { postId: post.id, accountId: target.account_id, values: step.values });
      Object.assign(target, step.values);
      if (step.kind === 'refuse') {
        settledTargets.push({ accountId: target.account_id, type: 'target.failed' });
        continue;
      }
      // The next target of this account, in this claim or another, waits for the pace.
      if (step.nextPublishAt !== null) {
        account.next_publish_at = step.nextPublishAt;
        paced.set(account.id, account);
      }
      taken.push({ post, target, attempt: step.values.attempts, account, attemptedBefore, release });
    }
    waits.set(post.id, wakeTimes);
    settled.set(post.id, settledTargets);
  }

  const { parts, fresh } = await chooseParts(trx, deps, taken, now);
  const withMedia = new Set(taken.map(({ post }) => post.id));
  const media = groupBy(
    await selectMediaOfPosts(
      trx,
      posts.filter(({ post, hasMedia }) => hasMedia && withMedia.has(post.id)).map(({ post }) => post.id),
    ),
    (m) => m.post_id,
  );
  const claimOf = new Map<string, Claim>();
  const calls: { claim: Claim; claimed: ClaimedTarget }[] = [];
  for (const { post, target, account, attempt, release } of taken) {
    const claim = claimOf.get(post.id) ?? { post, targets: [], media: media.get(post.id) ?? [] };
    claimOf.set(post.id, claim);
    calls.push({ claim, claimed: { target, attempt, account, parts: parts.get(targetKey(post.id, account.id)) ?? [], release } });
  }

  // A platform inside Herald's database is called now: its outcomes are written over the attempts, with the call.
  const partResults: Parameters<typeof updatePartResults>[1][number][] = [];
  const freshByKey = new Map(fresh.map((row) => [`${targetKey(row.post_id, row.account_id)}|${row.position}`, row]));
  for (const [publisher, items] of inDatabase(deps, calls)) {
    const requests = items.map(({ claim, claimed }) => requestOf(deps, claim, claimed, null));
    const outcomes = (await publisher.publishWithOutcomes?.(trx, requests)) ?? [];
    for (const [i, { claim, claimed }] of items.entries()) {
      const outcome = outcomes[i] ?? publisherThrew();
      const values = outcomeValues(deps.settings, claimed.target, outcome, now);
      const key = targetKey(claim.post.id, claimed.account.id);
      const update = targetUpdates.get(key);
      if (update !== undefined) update.values = { ...update.values, ...values };
      Object.assign(claimed.target, values);
      const event = settledEventOf(values);
      if (event !== null) settled.get(claim.post.id)?.push({ accountId: claimed.account.id, type: event });
      if (outcome.kind !== 'published') continue;
      for (const [position, part] of outcome.parts.entries()) {
        const result = { post_id: claim.post.id, account_id: claimed.account.id, position, ...partResult(part, now) };
        const chosen = freshByKey.get(`${key}|${position}`);
        // A part chosen now is written with its result; one an earlier attempt chose is updated.
        if (chosen === undefined) partResults.push(result);
        else Object.assign(chosen, result);
      }
    }
  }
  await insertPartsIfMissing(trx, fresh);
  await updatePartResults(trx, partResults);

  const changes: PublishingChange[] = [];
  for (const { post } of posts) {
    const targets = targetsOf.get(post.id) ?? [];
    const status = summarisePostStatus(targets.map(standing));
    // Taken targets wake the post when their lease ends (or their outcome's retry comes); waiting ones when they may go.
    const wakeTimes = [...(waits.get(post.id) ?? []), ...(claimOf.has(post.id) ? targets.flatMap((t) => wakeOf(t) ?? []) : [])];
    postUpdates.push({ id: post.id, status: { status, updatedAt: now }, nextCheckAt: nextCheckAt(status, wakeTimes) });
    changes.push({ post: { ...post, status, updated_at: now }, previousStatus: post.status, settledTargets: settled.get(post.id) ?? [], needsReconnect: [] });
    const claim = claimOf.get(post.id);
    if (claim !== undefined) claim.post = { ...post, status };
  }
  await updateTargets(trx, [...targetUpdates.values()]);
  await updateAccountsPacing(trx, [...paced.values()]);
  await updatePosts(trx, postUpdates);
  await emitPublishingEventsOf(trx, changes, now);

  for (const { claim, claimed } of calls) if (!isInDatabase(deps, claimed)) claim.targets.push(claimed);
  return { posts: claimOf.size, claims: [...claimOf.values()].filter((claim) => claim.targets.length > 0) };
}

/** Whether a target's platform is inside Herald's database (publishWithOutcomes): called in the transaction that writes its outcome. */
function isInDatabase(deps: Dependencies, claimed: ClaimedTarget): boolean {
  return callsInDatabase(deps, claimed.account);
}

function callsInDatabase(deps: Dependencies, account: AccountRow): boolean {
  return account.mode !== 'live' && deps.publishers.for(account)?.publishWithOutcomes !== undefined;
}

/** The platform host an account's calls go to: its instance where the platform has many, else the platform. */
function hostOf(deps: Dependencies, account: AccountRow): string {
  return deps.publishers.for(account)?.hostOf?.(account.platform_user_id) ?? account.platform;
}

/** The targets whose platform is inside Herald's database, by their publisher. */
function inDatabase(
  deps: Dependencies,
  calls: readonly { claim: Claim; claimed: ClaimedTarget }[],
): Map<Publisher, { claim: Claim; claimed: ClaimedTarget }[]> {
  return groupBy(
    calls.filter(({ claimed }) => isInDatabase(deps, claimed)),
    ({ claimed }) => deps.publishers.for(claimed.account),
  ) as Map<Publisher, { claim: Claim; claimed: ClaimedTarget }[]>;
}

/**
 * The parts of the targets taken, by target: those an earlier attempt chose, and the rest chosen
 * now (`fresh`, written by the caller). Material is chosen once, before the first call, and kept:
 * every retry repeats the same call. A target never attempted has no parts yet, so only earlier
 * attempts' are read.
 */
async function chooseParts(
  trx: Kysely<Database>,
  deps: Dependencies,
  taken: readonly Taking[],
  now: Date,
): Promise<{ parts: Map<string, PartRow[]>; fresh: PartRow[] }> {
  const attempted = [...new Set(taken.filter((t) => t.attemptedBefore).map(({ post }) => post.id))];
  const existing = groupBy(await selectPartsOfPosts(trx, attempted), (p) => targetKey(p.post_id, p.account_id));
  const fresh: PartRow[] = taken.flatMap(({ post, target, account }) => {
    const publisher = deps.publishers.for(account);
    const have = new Set((existing.get(targetKey(post.id, account.id)) ?? []).map((p) => p.position));
    const texts = partTexts({ caption: target.caption_override ?? post.caption, threadParts: target.thread_parts, firstComment: post.first_comment });
    return texts.flatMap((_, position) => {
      if (have.has(position)) return [];
      const material = publisher?.newPartMaterial(now) ?? { key: `${post.id}.${account.id}.${position}`, createdAt: now.toISOString() };
      return [
        {
          post_id: post.id,
          account_id: account.id,
          position,
          material_key: material.key,
          material_created_at: material.createdAt,
          platform_post_id: null,
          url: null,
          cid: null,
          published_at: null,
          progress: null,
        },
      ];
    });
  });
  const parts = groupBy([...[...existing.values()].flat(), ...fresh], (p) => targetKey(p.post_id, p.account_id));
  for (const group of parts.values()) group.sort((a, b) => a.position - b.position);
  return { parts, fresh };
}

/** Calls the platforms of the targets taken, side by side, and records each outcome as it comes. Never throws. */
async function publishClaims(deps: Dependencies, claims: readonly Claim[]): Promise<void> {
  await Promise.all(claims.flatMap((claim) => claim.targets.map((claimed) => publishTarget(deps, claim, claimed))));
}

/** Why an attempt's call was let go: another attempt holds its target (fenced), or it ran past publishTimeoutMs (overdue). */
export class AttemptStopped extends Error {
  constructor(readonly why: 'fenced' | 'overdue') {
    super(why === 'fenced' ? 'Another attempt holds this target' : 'The publication ran past its time bound');
    this.name = 'AttemptStopped';
  }
}

/**
 * Calls the platform for one target and records the outcome. While the call lives its lease is
 * renewed (a third of a lease apart), so no other worker takes the target as interrupted; once a
 * renewal finds another attempt holding it, the call is fenced: it records nothing, and its hooks
 * refuse to write, which stops the publisher before its next part. A call that runs past
 * publishTimeoutMs is let go the same way and its target recorded in doubt, to be retried after
 * asking the platform what it holds.
 */
async function publishTarget(deps: Dependencies, claim: Claim, claimed: ClaimedTarget): Promise<void> {
  const key: AttemptKey = { postId: claim.post.id, accountId: claimed.account.id, attempt: claimed.attempt };
  const stop = new AbortController();
  const stopped = new Promise<AttemptStopped>((resolve) =>
    stop.signal.addEventListener('abort', () => resolve(stop.signal.reason as AttemptStopped), { once: true }),
  );
  const renewal = setInterval(
    () => {
      renewLease(deps.db, key, new Date(deps.now().getTime() + deps.settings.leaseMs)).then(
        (held) => {
          if (!held) stop.abort(new AttemptStopped('fenced'));
        },
        (error: unknown) => deps.log.error({ ...key, errorName: errorName(error) }, 'could not renew a publishing lease'),
      );
    },
    Math.max(1, Math.floor(deps.settings.leaseMs / 3)),
  );
  const bound = setTimeout(() => stop.abort(new AttemptStopped('overdue')), deps.settings.publishTimeoutMs);
  try {
    const called = callPlatform(deps, claim, claimed, stop).catch((error: unknown): PublishOutcome => {
      if (!stop.signal.aborted) deps.log.error({ postId: claim.post.id, accountId: claimed.account.id, errorName: errorName(error) }, 'publisher threw');
      return publisherThrew();
    });
    const ended = await Promise.race([called, stopped]);
    if (ended instanceof AttemptStopped) {
      deps.log.info({ ...key, why: ended.why }, 'a publication was let go');
      if (ended.why === 'fenced') return;
    }
    await recordOutcomes(deps, [{ claim, claimed, outcome: ended instanceof AttemptStopped ? publicationOverdue(deps.settings) : ended }]);
  } finally {
    clearInterval(renewal);
    clearTimeout(bound);
    claimed.release();
  }
}

/** What a platform is asked to publish for a target taken. */
function requestOf(deps: Dependencies, claim: Claim, claimed: ClaimedTarget, credentials: unknown): PublishRequest<unknown> {
  const { post } = claim;
  const { target, account, parts } = claimed;
  const texts = partTexts({ caption: target.caption_override ?? post.caption, threadParts: target.thread_parts, firstComment: post.first_comment });
  const media = claim.media.map((row) => toMediaToPublish(deps, row));
  return {
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
}

async function callPlatform(deps: Dependencies, claim: Claim, claimed: ClaimedTarget, stop: AbortController): Promise<PublishOutcome> {
  const { post } = claim;
  const { account } = claimed;
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
  const request = requestOf(deps, claim, claimed, credentials);
  const hooks: PublishHooks<unknown> = {
    async refreshCredentials(refresh) {
      const refreshed = await refreshCredentials(deps, account.id, version, refresh, publisher.credentialsEndAt?.bind(publisher));
      version = refreshed.version;
      return refreshed.credentials;
    },
    async partPublished(index, part) {
      await recordPart(deps, { postId: post.id, accountId: account.id, attempt: claimed.attempt }, stop, index, partResult(part, deps.now()));
    },
    async partProgressed(index, progress) {
      await recordPart(deps, { postId: post.id, accountId: account.id, attempt: claimed.attempt }, stop, index, { progress });
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

/**
 * Records a part of an attempt that still holds its target (best effort: a failed write is
 * logged). Rejects with AttemptStopped once the attempt was let go or another holds the target,
 * writing nothing: the publisher stops there, sending no further part.
 */
async function recordPart(
  deps: Dependencies,
  key: AttemptKey,
  stop: AbortController,
  position: number,
  values: Parameters<typeof updatePart>[3],
): Promise<void> {
  stop.signal.throwIfAborted();
  const held = await updatePart(deps.db, key, position, values).catch((error: unknown) => {
    deps.log.error({ postId: key.postId, accountId: key.accountId, errorName: errorName(error) }, 'could not record a part');
    return true;
  });
  if (!held) stop.abort(new AttemptStopped('fenced'));
  stop.signal.throwIfAborted();
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

/**
 * In the posts' locks: writes each outcome over the attempt that made it (unless another worker
 * took the target over since), then the posts' status and events, in one transaction. Never
 * throws: if this fails, nothing of it commits; the targets stay publishing, their lease runs out,
 * and the next attempt repeats the same (idempotent) call.
 */
async function recordOutcomes(deps: Dependencies, items: readonly { claim: Claim; claimed: ClaimedTarget; outcome: PublishOutcome }[]): Promise<void> {
  const now = deps.now();
  await deps.db
    .transaction()
    .execute(async (trx) => {
      const posts = new Map((await selectPostsForUpdate(trx, [...new Set(items.map(({ claim }) => claim.post.id))])).map((p) => [p.id, p]));
      // A post deleted meanwhile has nothing left to record.
      const recorded = items
        .filter(({ claim }) => posts.has(claim.post.id))
        .map((item) => ({ ...item, values: outcomeValues(deps.settings, item.claimed.target, item.outcome, now) }));
      const written = await updateTargets(
        trx,
        recorded.map(({ claim, claimed, values }) => ({ postId: claim.post.id, accountId: claimed.account.id, values, attempt: claimed.attempt })),
      );
      const done = recorded.filter(({ claim, claimed }) => written.has(targetKey(claim.post.id, claimed.account.id)));
      if (done.length === 0) return;
      await updatePartResults(
        trx,
        done.flatMap(({ claim, claimed, outcome }) =>
          outcome.kind === 'published'
            ? outcome.parts.map((part, position) => ({ post_id: claim.post.id, account_id: claimed.account.id, position, ...partResult(part, now) }))
            : [],
        ),
      );
      const needsReconnect = new Map<string, AccountRow[]>();
      const retryAfter = new Map<string, Date>();
      for (const { claim, claimed, outcome } of [...done].sort((a, b) => a.claimed.account.id.localeCompare(b.claimed.account.id))) {
        if (outcome.kind !== 'failed') continue;
        if (outcome.credentialsRevoked) {
          const changed = await markNeedsReconnect(trx, claimed.account.id, outcome.message);
          if (changed !== undefined) needsReconnect.set(claim.post.id, [...(needsReconnect.get(claim.post.id) ?? []), changed]);
        }
        if (outcome.retryAfter !== null) retryAfter.set(claimed.account.id, outcome.retryAfter);
      }
      await updateAccountsPacing(
        trx,
        [...retryAfter].map(([id, at]) => ({ id, next_publish_at: at, last_turn_at: null })),
      );

      const byPost = groupBy(done, ({ claim }) => claim.post.id);
      const targetsOf = groupBy(await selectTargetsOfPosts(trx, [...byPost.keys()]), (t) => t.post_id);
      const postUpdates: PostUpdate[] = [];
      const changes: PublishingChange[] = [];
      for (const [postId, outcomesOfPost] of byPost) {
        const post = posts.get(postId);
        if (post === undefined) continue;
        const targets = targetsOf.get(postId) ?? [];
        const status = summarisePostStatus(targets.map(standing));
        // Each outcome that moves the post's next look moves it to the same time, from its targets as they now stand.
        const nextCheck = outcomesOfPost
          .map(({ values, outcome }) => nextCheckAfterOutcome(status, values, outcome, targets, now))
          .find((at) => at !== undefined);
        postUpdates.push({ id: postId, status: { status, updatedAt: now }, ...(nextCheck === undefined ? {} : { nextCheckAt: nextCheck }) });
        changes.push({
          post: { ...post, status, updated_at: now },
          previousStatus: post.status,
          settledTargets: outcomesOfPost.flatMap(({ claimed, values }) => {
            const settled = settledEventOf(values);
            return settled === null ? [] : [{ accountId: claimed.account.id, type: settled }];
          }),
          needsReconnect: needsReconnect.get(postId) ?? [],
        });
        for (const { claimed, outcome } of outcomesOfPost) {
          deps.log.info({ postId, accountId: claimed.account.id, outcome: outcome.kind, status }, 'publishing outcome recorded');
        }
      }
      await updatePosts(trx, postUpdates);
      await emitPublishingEventsOf(trx, changes, now);
    })
    .catch((error: unknown) => {
      for (const { claim, claimed } of items) {
        deps.log.error(
          { postId: claim.post.id, accountId: claimed.account.id, errorName: errorName(error) },
          'could not record a publishing outcome; the target will be retried when its lease ends',
        );
      }
    });
}
