import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TargetRow } from '../../src/db/queries/publishing.js';
import type { PublishOutcome } from '../../src/domain/ports/publisher.js';
import type { PublishingSettings } from '../../src/domain/publishing/settings.js';
import {
  claimStep,
  failedForGood,
  isDue,
  nextCheckAfterOutcome,
  nextCheckAt,
  outcomeOfReconciliation,
  outcomeValues,
  OWNER_LOST_ACCESS,
  partResult,
  publisherThrew,
  refusalOf,
  settledEventOf,
  settleFailed,
  standing,
  takeTurn,
  tooLateBy,
  type ClaimContext,
  type MachineAccount,
} from '../../src/domain/publishing/target-machine.js';

// The target state machine alone: no database, no clock; every time is one of these.
const now = new Date('2030-01-01T12:00:00.000Z');
const at = (ms: number) => new Date(now.getTime() + ms);
const MINUTE = 60_000;

const settings: PublishingSettings = {
  leaseMs: 5 * MINUTE,
  publishTimeoutMs: 15 * MINUTE,
  maxInFlightPerUser: 8,
  maxInFlightPerHost: 16,
  maxLatenessMs: 60 * MINUTE,
  maxAttempts: 5,
  backoffBaseMs: 30_000,
  maxBackoffMs: 30 * MINUTE,
  liveSpacingMs: 1_000,
  pollIntervalMs: null,
};

function target(overrides: Partial<TargetRow> = {}): TargetRow {
  return {
    post_id: 'pst_1',
    account_id: 'acc_1',
    position: 0,
    caption_override: null,
    fields: null,
    thread_parts: null,
    state: 'pending',
    attempts: 0,
    attempts_before_retry: 0,
    first_attempt_at: null,
    lease_until: null,
    in_doubt: false,
    awaiting_platform: false,
    next_attempt_at: null,
    error_category: null,
    error_message: null,
    platform_post_id: null,
    url: null,
    published_at: null,
    ...overrides,
  };
}

function account(overrides: Partial<MachineAccount> = {}): MachineAccount {
  return { mode: 'sandbox', disconnected_at: null, health: 'ok', health_message: null, next_publish_at: null, ...overrides };
}

const context = (overrides: Partial<ClaimContext> = {}): ClaimContext => ({ now, outOfReach: false, lateBy: null, settings, ...overrides });

const failed = (overrides: Partial<Extract<PublishOutcome, { kind: 'failed' }>> = {}): PublishOutcome => ({
  kind: 'failed',
  category: 'platform_error',
  message: 'The platform answered 503',
  retryable: true,
  retryAfter: null,
  mayHaveCommitted: false,
  credentialsRevoked: false,
  ...overrides,
});

/** A target as the claim leaves it for its n-th automatic attempt. */
const attempted = (attempts: number, overrides: Partial<TargetRow> = {}) =>
  target({ state: 'publishing', attempts, first_attempt_at: now, lease_until: at(settings.leaseMs), ...overrides });

describe('a due target refused before any call', () => {
  it('fails for good when its account was disconnected', () => {
    expect(claimStep(target(), account({ disconnected_at: at(-MINUTE) }), context())).toEqual({
      kind: 'refuse',
      values: {
        state: 'failed',
        error_category: 'auth_expired',
        error_message: 'The account was disconnected before this post was published',
        next_attempt_at: null,
        lease_until: null,
      },
    });
  });

  it("fails for good when the post's owner no longer reaches the account", () => {
    expect(claimStep(target(), account(), context({ outOfReach: true }))).toEqual({ kind: 'refuse', values: settleFailed('auth_expired', OWNER_LOST_ACCESS) });
  });

  it("fails for good when the account needs a reconnect, with the platform's word or a default one", () => {
    expect(refusalOf(account({ health: 'needs_reconnect', health_message: 'token revoked' }), false, null, settings)).toEqual({
      category: 'auth_expired',
      message: 'The account needs to be reconnected: token revoked',
    });
    expect(refusalOf(account({ health: 'needs_reconnect' }), false, null, settings)).toEqual({
      category: 'auth_expired',
      message: 'The account needs to be reconnected: the platform refused its credentials',
    });
  });

  it('fails for good when a scheduled post is taken later than the lateness bound, saying by how much', () => {
    const lateBy = tooLateBy({ status: 'scheduled', scheduled_at: at(-90 * MINUTE) }, now, settings);
    expect(lateBy).toBe(90 * MINUTE);
    expect(claimStep(target(), account(), context({ lateBy }))).toEqual({
      kind: 'refuse',
      values: settleFailed(
        'system_error',
        'Not published: it came due 90 minutes ago, while no worker was running, which is later than the 60-minute lateness bound; retry the post to publish it now',
      ),
    });
  });

  it('judges lateness only of a scheduled post, and only beyond the bound', () => {
    expect(tooLateBy({ status: 'scheduled', scheduled_at: at(-60 * MINUTE) }, now, settings)).toBeNull();
    expect(tooLateBy({ status: 'scheduled', scheduled_at: at(-60 * MINUTE - 1) }, now, settings)).toBe(60 * MINUTE + 1);
    expect(tooLateBy({ status: 'publishing', scheduled_at: at(-24 * 60 * MINUTE) }, now, settings)).toBeNull();
  });

  it('gives the first reason that holds: disconnected, out of reach, needs a reconnect, too late', () => {
    const everything = account({ disconnected_at: now, health: 'needs_reconnect' });
    expect(refusalOf(everything, true, 2 * 60 * MINUTE, settings)?.message).toBe('The account was disconnected before this post was published');
    expect(refusalOf(account({ health: 'needs_reconnect' }), true, 2 * 60 * MINUTE, settings)?.message).toBe(OWNER_LOST_ACCESS);
    expect(refusalOf(account({ health: 'needs_reconnect' }), false, 2 * 60 * MINUTE, settings)?.category).toBe('auth_expired');
    expect(refusalOf(account(), false, null, settings)).toBeNull();
  });

  it('refuses only a due target: one waiting for its retry keeps waiting', () => {
    const waiting = target({ state: 'failed', attempts: 1, next_attempt_at: at(MINUTE) });
    expect(claimStep(waiting, account({ disconnected_at: now }), context({ outOfReach: true }))).toEqual({ kind: 'wait', wakeAt: at(MINUTE) });
  });
});

describe('a target the claim takes or leaves', () => {
  it('takes a pending target for its first attempt, leased, and wakes at the lease end', () => {
    expect(claimStep(target(), account(), context())).toEqual({
      kind: 'take',
      values: {
        state: 'publishing',
        attempts: 1,
        lease_until: at(5 * MINUTE),
        first_attempt_at: now,
        in_doubt: false,
        awaiting_platform: false,
        next_attempt_at: null,
      },
      nextPublishAt: null,
      wakeAt: at(5 * MINUTE),
    });
  });

  it("paces a live account's next publication liveSpacingMs from now", () => {
    const step = claimStep(target(), account({ mode: 'live', next_publish_at: at(-MINUTE) }), context());
    expect(step).toMatchObject({ kind: 'take', nextPublishAt: at(1_000) });
  });

  it("holds back a target whose account's pace has not come (it waits for a turn)", () => {
    expect(claimStep(target(), account({ mode: 'live', next_publish_at: at(2_000) }), context())).toEqual({ kind: 'held' });
    expect(claimStep(target(), account({ mode: 'live', next_publish_at: now }), context())).toMatchObject({ kind: 'take' });
  });

  it('takes a retry once it is due, keeping when the first attempt began', () => {
    const retry = target({ state: 'failed', attempts: 2, first_attempt_at: at(-10 * MINUTE), next_attempt_at: now, in_doubt: true });
    expect(claimStep(retry, account(), context())).toMatchObject({ kind: 'take', values: { attempts: 3, first_attempt_at: at(-10 * MINUTE), in_doubt: true } });
    expect(claimStep({ ...retry, next_attempt_at: at(1) }, account(), context())).toEqual({ kind: 'wait', wakeAt: at(1) });
  });

  it('takes a target whose lease ran out as a new attempt in doubt: the worker may have called', () => {
    const interrupted = attempted(1, { lease_until: at(-1) });
    expect(claimStep(interrupted, account(), context())).toMatchObject({ kind: 'take', values: { attempts: 2, in_doubt: true } });
    expect(claimStep({ ...interrupted, lease_until: now }, account(), context())).toEqual({ kind: 'wait', wakeAt: now });
  });

  it('resumes a target waiting on the platform as the same attempt, not in doubt', () => {
    const awaiting = attempted(1, { lease_until: at(-1), awaiting_platform: true });
    expect(claimStep(awaiting, account(), context())).toMatchObject({ kind: 'take', values: { attempts: 1, in_doubt: false, awaiting_platform: false } });
  });

  it('leaves settled targets with nothing to wake for', () => {
    for (const settled of [target({ state: 'published' }), target({ state: 'unknown' }), target({ state: 'failed', attempts: 5 })]) {
      expect(isDue(settled, now)).toBe(false);
      expect(claimStep(settled, account(), context())).toEqual({ kind: 'wait', wakeAt: null });
    }
  });
});

describe('the values an outcome writes', () => {
  it('publishes: the first part is the target, no error, no doubt left', () => {
    const parts = [
      { platformPostId: 'at://did/post/1', url: 'https://bsky.app/1', cid: 'c1' },
      { platformPostId: 'at://did/post/2', url: null, cid: 'c2' },
    ];
    expect(outcomeValues(settings, attempted(2, { in_doubt: true }), { kind: 'published', parts }, now)).toEqual({
      state: 'published',
      platform_post_id: 'at://did/post/1',
      url: 'https://bsky.app/1',
      published_at: now,
      in_doubt: false,
      error_category: null,
      error_message: null,
      lease_until: null,
      next_attempt_at: null,
      awaiting_platform: false,
    });
    expect(partResult(parts[1]!, now)).toEqual({ platform_post_id: 'at://did/post/2', url: null, cid: 'c2', published_at: now });
  });

  it('ends unknown, for a person to decide, as a platform error', () => {
    expect(outcomeValues(settings, attempted(1), { kind: 'unknown', message: 'cannot tell' }, now)).toEqual({
      state: 'unknown',
      error_category: 'platform_error',
      error_message: 'cannot tell',
      lease_until: null,
      next_attempt_at: null,
      awaiting_platform: false,
    });
  });

  it("stays publishing while the platform works, looking again at the platform's pace, or at HERALD_POLL_INTERVAL_MS when set", () => {
    const pending: PublishOutcome = { kind: 'pending', checkAfterMs: 10_000 };
    expect(outcomeValues(settings, attempted(1), pending, now)).toEqual({
      state: 'publishing',
      awaiting_platform: true,
      lease_until: at(10_000),
      next_attempt_at: null,
    });
    expect(outcomeValues({ ...settings, pollIntervalMs: 250 }, attempted(1), pending, now)).toMatchObject({ lease_until: at(250) });
  });

  it('retries a transient failure with equal-jitter backoff: 15–30 s after the first attempt, 60–120 s after the third', () => {
    expect(outcomeValues(settings, attempted(1), failed(), now, () => 0).next_attempt_at).toEqual(at(15_000));
    expect(outcomeValues(settings, attempted(1), failed(), now, () => 1).next_attempt_at).toEqual(at(30_000));
    expect(outcomeValues(settings, attempted(3), failed(), now, () => 0.5)).toEqual({
      state: 'failed',
      next_attempt_at: at(90_000),
      in_doubt: false,
      error_category: 'platform_error',
      error_message: 'The platform answered 503',
      lease_until: null,
      awaiting_platform: false,
    });
    expect(outcomeValues({ ...settings, maxAttempts: 10 }, attempted(9), failed(), now, () => 1).next_attempt_at).toEqual(at(30 * MINUTE));
  });

  it("waits for the platform's retryAfter when it is later than the backoff, not when sooner", () => {
    expect(outcomeValues(settings, attempted(1), failed({ category: 'rate_limited', retryAfter: at(10 * MINUTE) }), now, () => 0).next_attempt_at).toEqual(
      at(10 * MINUTE),
    );
    expect(outcomeValues(settings, attempted(1), failed({ category: 'rate_limited', retryAfter: at(1_000) }), now, () => 0).next_attempt_at).toEqual(
      at(15_000),
    );
  });

  it('fails for good on the last automatic attempt, counted from the last manual retry', () => {
    expect(outcomeValues(settings, attempted(5), failed(), now).next_attempt_at).toBeNull();
    expect(outcomeValues(settings, attempted(4), failed(), now, () => 0).next_attempt_at).toEqual(at(120_000));
    expect(outcomeValues(settings, attempted(7, { attempts_before_retry: 3 }), failed(), now, () => 0).next_attempt_at).toEqual(at(120_000));
    expect(outcomeValues(settings, attempted(8, { attempts_before_retry: 3 }), failed(), now).next_attempt_at).toBeNull();
  });

  it('fails for good what is not retryable, in its category', () => {
    for (const category of ['auth_expired', 'user_content', 'media_error'] as const) {
      expect(outcomeValues(settings, attempted(1), failed({ category, message: 'no', retryable: false }), now)).toMatchObject({
        state: 'failed',
        next_attempt_at: null,
        error_category: category,
        error_message: 'no',
      });
    }
  });

  it('keeps a target in doubt once a call may have gone out, until it is published', () => {
    expect(outcomeValues(settings, attempted(1), failed({ mayHaveCommitted: true }), now)).toMatchObject({ in_doubt: true });
    expect(outcomeValues(settings, attempted(2, { in_doubt: true }), failed(), now)).toMatchObject({ in_doubt: true });
    expect(outcomeValues(settings, attempted(1), failed(), now)).toMatchObject({ in_doubt: false });
  });
});

describe('outcomes the road makes itself', () => {
  it('fails for good, with no doubt, when no call went out', () => {
    const outcome = failedForGood('auth_expired', 'The account has no stored credentials; connect it again');
    expect(outcome).toEqual({
      kind: 'failed',
      category: 'auth_expired',
      message: 'The account has no stored credentials; connect it again',
      retryable: false,
      retryAfter: null,
      mayHaveCommitted: false,
      credentialsRevoked: false,
    });
    expect(outcomeValues(settings, attempted(1), outcome, now)).toMatchObject({ state: 'failed', next_attempt_at: null, in_doubt: false });
  });

  it('retries in doubt when a publisher threw', () => {
    expect(outcomeValues(settings, attempted(1), publisherThrew(), now, () => 0)).toMatchObject({
      state: 'failed',
      next_attempt_at: at(15_000),
      in_doubt: true,
      error_category: 'system_error',
      error_message: 'Herald failed while publishing',
    });
  });

  it('of a part in doubt: unknown when the platform cannot tell, retried still in doubt when it could not be asked, called when found or absent', () => {
    const cannotTell = outcomeOfReconciliation({ kind: 'cannot_tell', message: 'two statuses match' });
    expect(cannotTell).toEqual({ kind: 'unknown', message: 'two statuses match' });
    expect(outcomeValues(settings, attempted(2, { in_doubt: true }), cannotTell!, now).state).toBe('unknown');

    const unanswered = outcomeOfReconciliation({ kind: 'unanswered', message: 'timed out' });
    expect(unanswered).toEqual({
      kind: 'failed',
      category: 'platform_error',
      message: 'timed out',
      retryable: true,
      retryAfter: null,
      mayHaveCommitted: true,
      credentialsRevoked: false,
    });
    expect(outcomeValues(settings, attempted(2, { in_doubt: true }), unanswered!, now, () => 0)).toMatchObject({
      state: 'failed',
      next_attempt_at: at(30_000),
      in_doubt: true,
    });

    expect(outcomeOfReconciliation({ kind: 'absent' })).toBeNull();
    expect(outcomeOfReconciliation({ kind: 'found', part: { platformPostId: '1', url: null, cid: null } })).toBeNull();
  });
});

describe('the event a change raises and the post standing it sums up to', () => {
  it('raises target.published, target.unknown, target.failed when settled; nothing while a retry or the platform is awaited', () => {
    expect(settledEventOf({ state: 'published', next_attempt_at: null })).toBe('target.published');
    expect(settledEventOf({ state: 'unknown', next_attempt_at: null })).toBe('target.unknown');
    expect(settledEventOf({ state: 'failed', next_attempt_at: null })).toBe('target.failed');
    expect(settledEventOf({ state: 'failed', next_attempt_at: at(15_000) })).toBeNull();
    expect(settledEventOf(outcomeValues(settings, attempted(1), { kind: 'pending', checkAfterMs: 5_000 }, now))).toBeNull();
  });

  it('counts a failed target with a retry coming as retrying', () => {
    expect(standing(target({ state: 'failed', next_attempt_at: at(1) }))).toEqual({ state: 'failed', retrying: true });
    expect(standing(target({ state: 'failed' }))).toEqual({ state: 'failed', retrying: false });
    expect(standing(target({ state: 'publishing', lease_until: at(1) }))).toEqual({ state: 'publishing', retrying: false });
  });
});

describe("a live account's line of held-back targets", () => {
  const S = 1_000;
  /** A line whose account may publish a spacing from now, ending at `back` spacings from now. */
  const line = (back: number | null, pace = S) => ({
    front: at(pace),
    back: back === null ? null : at(back * S),
    handedOut: new Set<number>(),
    paceAt: at(pace),
  });

  it('gives each target joining the line the turn after the last one handed out, from where the pace lets the account go', () => {
    const l = line(null);
    expect([takeTurn(l, true, now, S), takeTurn(l, true, now, S), takeTurn(l, true, now, S)]).toEqual([at(S), at(2 * S), at(3 * S)]);
    expect(l).toMatchObject({ front: at(4 * S), back: at(3 * S) });
  });

  it("continues a line an earlier claim began (the account's end of line), never before the pace", () => {
    expect(takeTurn(line(50), true, now, S)).toEqual(at(51 * S));
    // A line that has drained: the next turn is the pace's.
    expect(takeTurn(line(-5), true, now, S)).toEqual(at(S));
  });

  it('gives a target already in line that woke a little before its account could go the next turn, ahead of those joining', () => {
    const l = line(50);
    expect(takeTurn(l, false, now, S)).toEqual(at(S));
    expect(takeTurn(l, false, now, S)).toEqual(at(2 * S));
    expect(takeTurn(l, true, now, S)).toEqual(at(51 * S));
  });

  it('sends a target already in line to the end when a platform made its account wait (a retry-after), so waiting ones do not gather at its end', () => {
    const l = line(50, 15 * 60_000);
    expect(takeTurn(l, false, now, S)).toEqual(at(15 * 60_000));
    expect(takeTurn(l, false, now, S)).toEqual(at(15 * 60_000 + S));
    const waited = line(2_000, 15 * 60_000);
    expect(takeTurn(waited, false, now, S)).toEqual(at(2_001 * S));
  });

  it('hands each turn out once within a claim, never before the pace, whatever the mix of joining and waiting targets', () => {
    fc.assert(
      fc.property(
        fc.array(fc.boolean(), { maxLength: 40 }),
        fc.option(fc.integer({ min: -20, max: 20 }), { nil: null }),
        fc.integer({ min: 1, max: 5 * S }),
        (joining, back, pace) => {
          const l = line(back, pace);
          const turns = joining.map((j) => takeTurn(l, j, now, S).getTime());
          expect(new Set(turns).size).toBe(turns.length);
          for (const turn of turns) expect(turn).toBeGreaterThanOrEqual(at(pace).getTime());
        },
      ),
    );
  });
});

describe("the post's next look", () => {
  it('is the soonest wake while the post is publishing, none once it is settled or nothing wakes it', () => {
    expect(nextCheckAt('publishing', [at(5 * MINUTE), at(30_000), at(MINUTE)])).toEqual(at(30_000));
    expect(nextCheckAt('publishing', [])).toBeNull();
    for (const status of ['published', 'partial', 'failed']) expect(nextCheckAt(status, [at(1)])).toBeNull();
  });

  it("stays at the claim's lease end after an outcome that schedules nothing while other targets are in flight", () => {
    const values = outcomeValues(settings, attempted(1), { kind: 'published', parts: [] }, now);
    expect(nextCheckAfterOutcome('publishing', values, { kind: 'published', parts: [] }, [target({ state: 'published' }), attempted(1)], now)).toBeUndefined();
  });

  it('moves to the soonest wake when an outcome schedules a retry', () => {
    const values = outcomeValues(settings, attempted(1), failed(), now, () => 0);
    const targets = [
      target({ state: 'failed', next_attempt_at: values.next_attempt_at }),
      attempted(1, { lease_until: at(4 * MINUTE) }),
      target({ state: 'published' }),
    ];
    expect(nextCheckAfterOutcome('publishing', values, failed(), targets, now)).toEqual(at(15_000));
  });

  it('moves when waiting on the platform, to now when another target is still pending', () => {
    const pending: PublishOutcome = { kind: 'pending', checkAfterMs: 20_000 };
    const values = outcomeValues(settings, attempted(1), pending, now);
    expect(nextCheckAfterOutcome('publishing', values, pending, [attempted(1, { lease_until: at(20_000), awaiting_platform: true })], now)).toEqual(at(20_000));
    expect(nextCheckAfterOutcome('publishing', values, pending, [attempted(1, { lease_until: at(20_000), awaiting_platform: true }), target()], now)).toEqual(
      now,
    );
  });

  it('goes once the post is settled', () => {
    const values = outcomeValues(settings, attempted(5), failed(), now);
    expect(nextCheckAfterOutcome('failed', values, failed(), [target({ state: 'failed', attempts: 5 })], now)).toBeNull();
  });
});

describe('properties of the machine', () => {
  const failure = fc.record({
    retryable: fc.boolean(),
    mayHaveCommitted: fc.boolean(),
    retryAfterMs: fc.option(fc.integer({ min: -10 * MINUTE, max: 60 * MINUTE }), { nil: null }),
  });
  const randomValue = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

  it('never schedules a retry before now, before the backoff, nor before the platform asked', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 0, max: 30 }), failure, randomValue, (automatic, before, f, r) => {
        const retryAfter = f.retryAfterMs === null ? null : at(f.retryAfterMs);
        const values = outcomeValues(
          settings,
          attempted(before + automatic, { attempts_before_retry: before }),
          failed({ retryable: f.retryable, mayHaveCommitted: f.mayHaveCommitted, retryAfter }),
          now,
          () => r,
        );
        if (!f.retryable || automatic >= settings.maxAttempts) {
          expect(values.next_attempt_at).toBeNull();
          return;
        }
        const ceiling = Math.min(settings.maxBackoffMs, settings.backoffBaseMs * 2 ** (automatic - 1));
        const next = values.next_attempt_at!.getTime();
        expect(next).toBeGreaterThan(now.getTime());
        expect(next).toBeGreaterThanOrEqual(now.getTime() + Math.round(ceiling / 2));
        if (retryAfter !== null) expect(next).toBeGreaterThanOrEqual(retryAfter.getTime());
        if (retryAfter === null || retryAfter.getTime() <= now.getTime() + ceiling / 2) expect(next).toBeLessThanOrEqual(now.getTime() + ceiling);
      }),
    );
  });

  it('makes exactly maxAttempts automatic attempts of a target that keeps failing, then fails it for good', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 0, max: 20 }),
        fc.array(randomValue, { minLength: 1, maxLength: 10 }),
        (maxAttempts, before, randoms) => {
          const s = { ...settings, maxAttempts };
          let t = target({ attempts: before, attempts_before_retry: before });
          let clock = now;
          let calls = 0;
          for (;;) {
            const step = claimStep(t, account(), { now: clock, outOfReach: false, lateBy: null, settings: s });
            expect(step.kind).toBe('take');
            if (step.kind !== 'take') return;
            t = { ...t, ...step.values };
            calls += 1;
            expect(t.attempts - t.attempts_before_retry).toBeLessThanOrEqual(maxAttempts);
            const values = outcomeValues(s, t, failed({ mayHaveCommitted: true }), clock, () => randoms[calls % randoms.length]!);
            t = { ...t, ...values };
            if (values.next_attempt_at === null) break;
            expect(settledEventOf(values)).toBeNull();
            clock = values.next_attempt_at;
          }
          expect(calls).toBe(maxAttempts);
          expect(t.attempts).toBe(before + maxAttempts);
          expect(settledEventOf(t)).toBe('target.failed');
          expect(claimStep(t, account(), { now: at(365 * 24 * 60 * MINUTE), outOfReach: false, lateBy: null, settings: s })).toEqual({
            kind: 'wait',
            wakeAt: null,
          });
        },
      ),
    );
  });

  it('picks the soonest wake time as the next look of a publishing post', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -MINUTE, max: 24 * 60 * MINUTE }), { minLength: 1, maxLength: 20 }), (offsets) => {
        expect(nextCheckAt('publishing', offsets.map(at))).toEqual(at(Math.min(...offsets)));
      }),
    );
  });

  it('takes a due target for at most one more attempt, leased from now, and not before its account is due', () => {
    const states = fc.constantFrom('pending', 'publishing', 'failed', 'published', 'unknown') as fc.Arbitrary<TargetRow['state']>;
    const moment = fc.option(fc.integer({ min: -10 * MINUTE, max: 10 * MINUTE }), { nil: null });
    fc.assert(
      fc.property(states, fc.integer({ min: 0, max: 10 }), moment, moment, fc.boolean(), moment, (state, attempts, lease, next, awaiting, pace) => {
        const t = target({
          state,
          attempts,
          lease_until: lease === null ? null : at(lease),
          next_attempt_at: next === null ? null : at(next),
          awaiting_platform: awaiting,
        });
        const a = account({ mode: 'live', next_publish_at: pace === null ? null : at(pace) });
        const step = claimStep(t, a, context());
        if (step.kind !== 'take') {
          if (step.kind === 'wait' && step.wakeAt !== null) expect(step.wakeAt.getTime()).toBeGreaterThanOrEqual(now.getTime());
          return;
        }
        expect(isDue(t, now)).toBe(true);
        expect(pace === null || pace <= 0).toBe(true);
        expect(step.values.attempts - attempts).toBeGreaterThanOrEqual(0);
        expect(step.values.attempts - attempts).toBeLessThanOrEqual(1);
        expect(step.values.lease_until).toEqual(at(settings.leaseMs));
        expect(step.wakeAt).toEqual(step.values.lease_until);
        expect(step.nextPublishAt).toEqual(at(settings.liveSpacingMs));
      }),
    );
  });
});
