import { describe, expect, it } from 'vitest';
import { Lanes, type Step } from '../../src/worker/lanes.js';

/** Work a test hands out and finishes by hand; records how many pieces ran at once and every look. */
function workbench() {
  const due: string[] = [];
  const finish = new Map<string, () => void>();
  const errors: unknown[] = [];
  let running = 0;
  let mostRunning = 0;
  let looks = 0;
  const take = (): Promise<Step> => {
    looks += 1;
    const piece = due.shift();
    if (piece === undefined) return Promise.resolve('none');
    return Promise.resolve(async () => {
      running += 1;
      mostRunning = Math.max(mostRunning, running);
      await new Promise<void>((resolve) => finish.set(piece, resolve));
      running -= 1;
    });
  };
  return {
    due,
    errors,
    take,
    finish: (piece: string) => finish.get(piece)?.(),
    started: () => [...finish.keys()],
    looks: () => looks,
    mostRunning: () => mostRunning,
  };
}

/** Lets every settled promise's callbacks run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('Lanes', () => {
  it('takes what comes due while a lane is held by work that does not end', async () => {
    const bench = workbench();
    const lanes = new Lanes(3, bench.take, (error) => bench.errors.push(error));
    bench.due.push('tarpit');
    lanes.wake();
    await settle();
    bench.due.push('post');
    lanes.wake();
    await settle();
    expect(bench.started()).toEqual(['tarpit', 'post']);
    bench.finish('post');
    bench.finish('tarpit');
    await lanes.stop();
  });

  it('grows with the work up to its size, and a wake with nothing due costs one look', async () => {
    const bench = workbench();
    const lanes = new Lanes(2, bench.take, (error) => bench.errors.push(error));
    lanes.wake();
    await settle();
    expect(bench.looks()).toBe(1);

    bench.due.push('a', 'b', 'c');
    lanes.wake();
    await settle();
    expect(bench.started()).toEqual(['a', 'b']);
    bench.finish('a');
    await settle();
    expect(bench.started()).toEqual(['a', 'b', 'c']);
    bench.finish('b');
    bench.finish('c');
    await lanes.stop();
    expect(bench.mostRunning()).toBe(2);
  });

  it('looks again when woken while every lane was looking and found nothing', async () => {
    const bench = workbench();
    let release: (step: Step) => void = () => {};
    let first = true;
    const lanes = new Lanes(
      1,
      () => {
        if (!first) return bench.take();
        first = false;
        // The first look read the database before the work below was committed.
        return new Promise<Step>((resolve) => (release = resolve));
      },
      (error) => bench.errors.push(error),
    );
    lanes.wake();
    bench.due.push('announced');
    lanes.wake();
    release('none');
    await settle();
    expect(bench.started()).toEqual(['announced']);
    bench.finish('announced');
    await lanes.stop();
  });

  it('stops taking work, and stop waits for the work in hand', async () => {
    const bench = workbench();
    const lanes = new Lanes(2, bench.take, (error) => bench.errors.push(error));
    bench.due.push('a', 'b');
    lanes.wake();
    await settle();
    let stopped = false;
    const stopping = lanes.stop().then(() => (stopped = true));
    bench.due.push('c');
    lanes.wake();
    bench.finish('a');
    await settle();
    expect(stopped).toBe(false);
    bench.finish('b');
    await stopping;
    expect(bench.started()).toEqual(['a', 'b']);
  });

  it('reports a step that failed, and the next wake starts a lane again', async () => {
    const bench = workbench();
    let fail = true;
    const lanes = new Lanes(
      1,
      () => {
        if (!fail) return bench.take();
        fail = false;
        return Promise.reject(new Error('database gone'));
      },
      (error) => bench.errors.push(error),
    );
    bench.due.push('a');
    lanes.wake();
    await settle();
    expect(bench.errors).toEqual([new Error('database gone')]);
    expect(bench.started()).toEqual([]);
    lanes.wake();
    await settle();
    expect(bench.started()).toEqual(['a']);
    bench.finish('a');
    await lanes.stop();
  });
});
