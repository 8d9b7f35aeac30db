import type { AccountRow } from '../../db/queries/accounts.js';
import type { PostRow } from '../../db/queries/posts.js';
import type { TargetRow } from '../../db/queries/publishing.js';
import type { ErrorCategory, PublishOutcome, PublishedPart, Reconciliation } from '../ports/publisher.js';
import type { PublishingChange } from '../webhooks/events.js';
import { backoffMs, type PublishingSettings } from './settings.js';

/*
 * A target's state machine, pure: every decision the publishing road takes about one target, as
 * values to write. No database, no platform call, no clock: `now` and the jitter's random are
 * given, so the same inputs always give the same values.
 *
 *   pending ─claim─▶ publishing ─outcome─▶ published | unknown | failed (retrying or for good)
 *   failed (retrying, due) ─claim─▶ publishing            publishing (lease ended) ─claim─▶ publishing
 *   publishing ─pending outcome─▶ publishing, awaiting the platform until lease_until
 */

/** Why a target fails when its post's owner can no longer post to its account (they left its organization). */
export const OWNER_LOST_ACCESS = "The post's owner no longer has access to this account";

/** Why a due target cannot go out at all. */
export interface Refusal {
  category: ErrorCategory;
  message: string;
}

/** What a target's account tells the machine: whether it may post, and when its pace lets it. */
export type MachineAccount = Pick<AccountRow, 'mode' | 'disconnected_at' | 'health' | 'health_message' | 'next_publish_at'>;

/** The values a claim writes over a target it takes; `attempts` is the attempt the call makes. */
export interface TakenValues {
  state: 'publishing';
  attempts: number;
  lease_until: Date;
  first_attempt_at: Date;
  in_doubt: boolean;
  awaiting_platform: false;
  next_attempt_at: null;
}

/** What a claim does with one target of the post it holds. */
export type ClaimStep =
  /** Not due yet: the post is looked at again at `wakeAt` (null: nothing to wait for). */
  | { kind: 'wait'; wakeAt: Date | null }
  /** Due and able to go, but its live account's pace holds it back: it waits for a turn (takeTurn). */
  | { kind: 'held' }
  /** It cannot go out at all: failed for good, with no call. */
  | { kind: 'refuse'; values: SettledFailure }
  /** Taken: written before the call; a live account's next publication is paced to `nextPublishAt`; the lease's end is a wake. */
  | { kind: 'take'; values: TakenValues; nextPublishAt: Date | null; wakeAt: Date };

export interface ClaimContext {
  now: Date;
  /** The post's owner no longer reaches the target's account. */
  outOfReach: boolean;
  /** How late the post is, in ms, when that is too late to go out (tooLateBy); null when it may go out. */
  lateBy: number | null;
  settings: PublishingSettings;
}

/**
 * How late a post is when taken, when later than maxLatenessMs; null when it may go out. Lateness
 * is judged once, when a scheduled post is first taken; a post already publishing is not late.
 */
export function tooLateBy(
  post: Pick<PostRow, 'status'> & { scheduled_at: Date },
  now: Date,
  settings: Pick<PublishingSettings, 'maxLatenessMs'>,
): number | null {
  const lateBy = now.getTime() - post.scheduled_at.getTime();
  return post.status === 'scheduled' && lateBy > settings.maxLatenessMs ? lateBy : null;
}

/** Due: never tried, its retry has come, or the worker that held it let its lease run out. */
export function isDue(target: Pick<TargetRow, 'state' | 'next_attempt_at' | 'lease_until'>, now: Date): boolean {
  return (
    target.state === 'pending' ||
    (target.state === 'failed' && target.next_attempt_at !== null && target.next_attempt_at <= now) ||
    (target.state === 'publishing' && target.lease_until !== null && target.lease_until < now)
  );
}

/** When a target not yet due becomes due: its lease's end, or its retry; null when it never will by itself. */
export function wakeOf(target: Pick<TargetRow, 'state' | 'next_attempt_at' | 'lease_until'>): Date | null {
  if (target.state === 'publishing' && target.lease_until !== null) return target.lease_until;
  if (target.state === 'failed' && target.next_attempt_at !== null) return target.next_attempt_at;
  return null;
}

/** Why a due target cannot go out at all; null when it can. The first reason that holds wins. */
export function refusalOf(
  account: Pick<AccountRow, 'disconnected_at' | 'health' | 'health_message'>,
  outOfReach: boolean,
  lateBy: number | null,
  settings: Pick<PublishingSettings, 'maxLatenessMs'>,
): Refusal | null {
  if (account.disconnected_at !== null) return { category: 'auth_expired', message: 'The account was disconnected before this post was published' };
  if (outOfReach) return { category: 'auth_expired', message: OWNER_LOST_ACCESS };
  if (account.health === 'needs_reconnect') {
    return { category: 'auth_expired', message: `The account needs to be reconnected: ${account.health_message ?? 'the platform refused its credentials'}` };
  }
  if (lateBy !== null) {
    return {
      category: 'system_error',
      message: `Not published: it came due ${Math.round(lateBy / 60_000)} minutes ago, while no worker was running, which is later than the ${Math.round(settings.maxLatenessMs / 60_000)}-minute lateness bound; retry the post to publish it now`,
    };
  }
  return null;
}

/** What a claim does with one target: waits, refuses it, or takes it for one attempt. */
export function claimStep(
  target: Pick<TargetRow, 'state' | 'next_attempt_at' | 'lease_until' | 'attempts' | 'first_attempt_at' | 'in_doubt' | 'awaiting_platform'>,
  account: MachineAccount,
  context: ClaimContext,
): ClaimStep {
  const { now, settings } = context;
  if (!isDue(target, now)) return { kind: 'wait', wakeAt: wakeOf(target) };
  const refusal = refusalOf(account, context.outOfReach, context.lateBy, settings);
  if (refusal !== null) return { kind: 'refuse', values: settleFailed(refusal.category, refusal.message) };
  if (account.next_publish_at !== null && account.next_publish_at > now) return { kind: 'held' };
  // A target waiting on the platform is the same attempt looked at again, not one a stopped worker left in doubt.
  const resumed = target.state === 'publishing' && target.awaiting_platform;
  const leaseUntil = new Date(now.getTime() + settings.leaseMs);
  const values: TakenValues = {
    state: 'publishing',
    attempts: resumed ? target.attempts : target.attempts + 1,
    lease_until: leaseUntil,
    first_attempt_at: target.first_attempt_at ?? now,
    in_doubt: target.in_doubt || (target.state === 'publishing' && !resumed),
    awaiting_platform: false,
    next_attempt_at: null,
  };
  // Only live accounts are paced; the pace has come by now (else the target waited), so the next one is spaced from now.
  const nextPublishAt = account.mode === 'live' ? new Date(now.getTime() + settings.liveSpacingMs) : null;
  return { kind: 'take', values, nextPublishAt, wakeAt: leaseUntil };
}

/**
 * The turns of a live account whose pace holds targets back, as a claim hands them out: `front`
 * is its next turn (when its pace next lets it publish, moved on as turns are handed out), `back`
 * the last turn handed out so far (kept on the account: its line's end), `handedOut` the turns
 * this claim gave (ms), `paceAt` when the account's pace lets it publish, as the claim found it.
 */
export interface AccountLine {
  front: Date;
  back: Date | null;
  handedOut: Set<number>;
  paceAt: Date;
}

/** A line as a claim finds it: the account's pace, and the end of its line. */
export function lineOf(account: Pick<AccountRow, 'next_publish_at' | 'last_turn_at'>, now: Date): AccountLine {
  const paceAt = account.next_publish_at ?? now;
  return { front: paceAt, back: account.last_turn_at, handedOut: new Set(), paceAt };
}

/**
 * When a held-back target is looked at again. One joining the line (its post comes due for the
 * first time) waits a spacing after the line's end. One already in line woke at its turn: if the
 * publication before it went out a little late (the pace holds the account no longer than a
 * spacing), it takes the next turn; if the platform asked the account to wait (a rate limit's
 * retry-after), it joins the line's end again, so the posts that wake meanwhile do not all
 * gather at the end of the wait. So a backlog of thousands on one account wakes a post or two a
 * turn, rather than all of it every turn.
 */
export function takeTurn(line: AccountLine, joining: boolean, now: Date, spacingMs: number): Date {
  const front = line.front.getTime();
  const afterBack = line.back === null ? front : line.back.getTime() + spacingMs;
  const toBack = joining || line.paceAt.getTime() - now.getTime() > spacingMs;
  const turn = toBack && afterBack > front ? afterBack : front;
  line.handedOut.add(turn);
  let next = front;
  while (spacingMs > 0 && line.handedOut.has(next)) next += spacingMs;
  line.front = new Date(next);
  if (line.back === null || turn > line.back.getTime()) line.back = new Date(turn);
  return new Date(turn);
}

export type SettledFailure = ReturnType<typeof settleFailed>;

/** A target's values once it has failed for good (no automatic retry). */
export function settleFailed(category: ErrorCategory, message: string) {
  return { state: 'failed' as const, error_category: category, error_message: message, next_attempt_at: null, lease_until: null };
}

/** What the post's status is summed up from. */
export function standing(target: Pick<TargetRow, 'state' | 'next_attempt_at'>) {
  return { state: target.state, retrying: target.state === 'failed' && target.next_attempt_at !== null };
}

/** When a worker next looks at the post: the soonest wake time, never once the post is settled. */
export function nextCheckAt(status: string, wakeTimes: readonly Date[]): Date | null {
  return status !== 'publishing' || wakeTimes.length === 0 ? null : new Date(Math.min(...wakeTimes.map((t) => t.getTime())));
}

/** An outcome that fails the target with no retry and no doubt: the call did not go out. */
export function failedForGood(category: ErrorCategory, message: string): PublishOutcome {
  return { kind: 'failed', category, message, retryable: false, retryAfter: null, mayHaveCommitted: false, credentialsRevoked: false };
}

/** A publisher promises not to throw; if one does, the call may have gone out, so the retry is in doubt. */
export function publisherThrew(): PublishOutcome {
  return {
    kind: 'failed',
    category: 'system_error',
    message: 'Herald failed while publishing',
    retryable: true,
    retryAfter: null,
    mayHaveCommitted: true,
    credentialsRevoked: false,
  };
}

/**
 * A publication that ran past its time bound: it may have reached the platform, so the target is
 * in doubt, and its retry first asks the platform what it holds (reconcile) before sending again.
 */
export function publicationOverdue(settings: Pick<PublishingSettings, 'publishTimeoutMs'>): PublishOutcome {
  return {
    kind: 'failed',
    category: 'platform_error',
    message: `The platform did not finish publishing within ${Math.round(settings.publishTimeoutMs / 1000)} s; it may have published it, so the retry asks it first`,
    retryable: true,
    retryAfter: null,
    mayHaveCommitted: true,
    credentialsRevoked: false,
  };
}

/**
 * What the platform's answer about a part in doubt ends the attempt with, before anything is sent
 * again: `unknown` when it cannot tell (a person decides), a retry still in doubt when it could not
 * be asked; null when the call goes ahead (the part was found, or is absent).
 */
export function outcomeOfReconciliation(found: Reconciliation): PublishOutcome | null {
  if (found.kind === 'cannot_tell') return { kind: 'unknown', message: found.message };
  if (found.kind === 'unanswered')
    return {
      kind: 'failed',
      category: 'platform_error',
      message: found.message,
      retryable: true,
      retryAfter: null,
      mayHaveCommitted: true,
      credentialsRevoked: false,
    };
  return null;
}

/** The values a published part writes. */
export function partResult(part: PublishedPart, now: Date) {
  return { platform_post_id: part.platformPostId, url: part.url, cid: part.cid, published_at: now };
}

/**
 * The values an outcome writes over the attempt that made it. `target` is as the claim left it:
 * its attempts already count this attempt. A retry is never due before now, nor before the
 * platform's retryAfter; the automatic attempts since the last manual retry never exceed maxAttempts.
 */
export function outcomeValues(
  settings: PublishingSettings,
  target: Pick<TargetRow, 'attempts' | 'attempts_before_retry' | 'in_doubt'>,
  outcome: PublishOutcome,
  now: Date,
  random: () => number = Math.random,
) {
  const common = { lease_until: null, next_attempt_at: null, awaiting_platform: false };
  switch (outcome.kind) {
    case 'published': {
      const first = outcome.parts[0];
      return {
        ...common,
        state: 'published' as const,
        platform_post_id: first?.platformPostId ?? null,
        url: first?.url ?? null,
        published_at: now,
        in_doubt: false,
        error_category: null,
        error_message: null,
      };
    }
    case 'unknown':
      return { ...common, state: 'unknown' as const, error_category: 'platform_error', error_message: outcome.message };
    case 'pending':
      // Still publishing; the look at lease_until resumes it (HERALD_POLL_INTERVAL_MS overrides every platform's pace).
      return {
        ...common,
        state: 'publishing' as const,
        awaiting_platform: true,
        lease_until: new Date(now.getTime() + (settings.pollIntervalMs ?? outcome.checkAfterMs)),
      };
    case 'failed': {
      const automatic = target.attempts - target.attempts_before_retry;
      const retry = outcome.retryable && automatic < settings.maxAttempts;
      let next: Date | null = null;
      if (retry) {
        const backoff = new Date(now.getTime() + backoffMs(settings, automatic, random));
        next = outcome.retryAfter !== null && outcome.retryAfter > backoff ? outcome.retryAfter : backoff;
      }
      return {
        ...common,
        state: 'failed' as const,
        next_attempt_at: next,
        in_doubt: target.in_doubt || outcome.mayHaveCommitted,
        error_category: outcome.category,
        error_message: outcome.message,
      };
    }
  }
}

export type OutcomeValues = ReturnType<typeof outcomeValues>;

/** The target event an outcome raises: none while an automatic retry is coming. */
export function settledEventOf(values: { state: string; next_attempt_at: Date | null }): PublishingChange['settledTargets'][number]['type'] | null {
  if (values.state === 'published') return 'target.published';
  if (values.state === 'unknown') return 'target.unknown';
  return values.state === 'failed' && values.next_attempt_at === null ? 'target.failed' : null;
}

/**
 * The post's next look once an outcome is written, from its targets as they now stand; undefined
 * leaves the one the claim set (the lease's end), which still covers targets in flight. It moves
 * when the post is settled (to none), or when this outcome schedules a retry or waits on the
 * platform (sooner than the lease's end): to the soonest wake, a pending target being due now.
 */
export function nextCheckAfterOutcome(
  status: string,
  values: { state: string; next_attempt_at: Date | null },
  outcome: PublishOutcome,
  targets: readonly Pick<TargetRow, 'state' | 'next_attempt_at' | 'lease_until'>[],
  now: Date,
): Date | null | undefined {
  const retrying = (values.state === 'failed' && values.next_attempt_at !== null) || outcome.kind === 'pending';
  if (status === 'publishing' && !retrying) return undefined;
  const wakeTimes = targets.flatMap((t) =>
    t.state === 'failed' && t.next_attempt_at !== null
      ? [t.next_attempt_at]
      : t.state === 'publishing' && t.lease_until !== null
        ? [t.lease_until]
        : t.state === 'pending'
          ? [now]
          : [],
  );
  return nextCheckAt(status, wakeTimes);
}
