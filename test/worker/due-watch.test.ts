import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DueWatch } from '../../src/worker/due-watch.js';
import { nextLookAt } from '../../src/worker/worker.js';

const NEXT_IN = 10_000;

/** A watch whose looks are recorded (by the time they ran) and end when the test says. */
function watched() {
  const looks: number[] = [];
  const ends: ((next: number) => void)[] = [];
  const errors: unknown[] = [];
  let failNext = false;
  const watch = new DueWatch(
    () => {
      looks.push(Date.now());
      if (failNext) {
        failNext = false;
        return Promise.reject(new Error('database gone'));
      }
      return new Promise<number>((resolve) => ends.push(resolve));
    },
    (error) => errors.push(error),
    1_000,
    () => Date.now(),
  );
  return {
    watch,
    looks,
    errors,
    /** Ends the look running, saying when to look next. */
    end(next = Date.now() + NEXT_IN) {
      ends.shift()?.(next);
    },
    failNextLook() {
      failNext = true;
    },
  };
}

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('DueWatch', () => {
  it('looks once, at the soonest time it was told of, and never before it', async () => {
    const w = watched();
    w.watch.dueAt(1_000_500);
    w.watch.dueAt(1_000_200);
    w.watch.dueAt(1_000_900);
    await vi.advanceTimersByTimeAsync(199);
    expect(w.looks).toEqual([]);
    await vi.advanceTimersByTimeAsync(2);
    expect(w.looks).toEqual([1_000_201]);
    w.end();
    await vi.advanceTimersByTimeAsync(NEXT_IN - 1);
    expect(w.looks).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2);
    expect(w.looks).toHaveLength(2);
    w.end();
    await w.watch.stop();
  });

  it('never runs two looks at once, and looks again right after one during which work was announced', async () => {
    const w = watched();
    w.watch.dueAt(Date.now());
    await vi.advanceTimersByTimeAsync(1);
    expect(w.looks).toHaveLength(1);
    // Announced while the look runs (it may have read the database before this was committed).
    w.watch.dueAt(Date.now());
    await vi.advanceTimersByTimeAsync(100);
    expect(w.looks).toHaveLength(1);
    w.end();
    await vi.advanceTimersByTimeAsync(1);
    expect(w.looks).toHaveLength(2);
    w.end();
    await vi.advanceTimersByTimeAsync(NEXT_IN - 10);
    expect(w.looks).toHaveLength(2);
    await w.watch.stop();
  });

  it('hears of a failed look and tries again after the retry time', async () => {
    const w = watched();
    w.failNextLook();
    w.watch.dueAt(Date.now());
    await vi.advanceTimersByTimeAsync(1);
    expect(w.errors).toEqual([new Error('database gone')]);
    await vi.advanceTimersByTimeAsync(999);
    expect(w.looks).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2);
    expect(w.looks).toHaveLength(2);
    w.end();
    await w.watch.stop();
  });

  it('once stopped, waits for the look in hand and plans no other', async () => {
    const w = watched();
    w.watch.dueAt(Date.now());
    await vi.advanceTimersByTimeAsync(1);
    let stopped = false;
    const stopping = w.watch.stop().then(() => {
      stopped = true;
    });
    w.watch.dueAt(Date.now());
    await vi.advanceTimersByTimeAsync(10);
    expect(stopped).toBe(false);
    w.end(Date.now());
    await stopping;
    await vi.advanceTimersByTimeAsync(NEXT_IN * 2);
    expect(w.looks).toHaveLength(1);
  });
});

describe('nextLookAt', () => {
  const now = 1_000_000;
  it('looks at the soonest due time, however soon', () => {
    expect(nextLookAt(new Date(now + 33), now, true)).toBe(now + 33);
    expect(nextLookAt(new Date(now + 1), now, true)).toBe(now + 1);
    expect(nextLookAt(new Date(now + 20_000), now, true)).toBe(now + 20_000);
  });
  it('looks within 30 s when it hears announcements, and within 1 s when it does not', () => {
    expect(nextLookAt(null, now, true)).toBe(now + 30_000);
    expect(nextLookAt(new Date(now + 3_600_000), now, true)).toBe(now + 30_000);
    expect(nextLookAt(null, now, false)).toBe(now + 1_000);
    expect(nextLookAt(new Date(now + 20_000), now, false)).toBe(now + 1_000);
  });
});
