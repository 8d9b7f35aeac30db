import { describe, expect, it } from 'vitest';
import { ApiKeyCache } from '../../src/domain/api-key-cache.js';
import type { ApiKeyLookup } from '../../src/db/queries/api-keys.js';

const row = { id: 'key_1', user_id: 'usr_1', key_hash: 'h', expires_at: null, revoked_at: null };
const revoked = { ...row, revoked_at: new Date('2026-11-26T10:00:00Z') };

/** A lookup that answers when told to, counting how often it was asked. */
function pendingLoads() {
  const answers: ((found: ApiKeyLookup | undefined) => void)[] = [];
  const failures: ((err: Error) => void)[] = [];
  return {
    load: () =>
      new Promise<ApiKeyLookup | undefined>((resolve, reject) => {
        answers.push(resolve);
        failures.push(reject);
      }),
    get calls() {
      return answers.length;
    },
    answer: (i: number, found: ApiKeyLookup | undefined) => answers[i]?.(found),
    fail: (i: number) => failures[i]?.(new Error('connection lost')),
  };
}

describe('ApiKeyCache', () => {
  it('keeps nothing and gives nothing while it cannot hear the database', async () => {
    const cache = new ApiKeyCache();
    await cache.lookUp('h', () => Promise.resolve(row));
    expect(cache.get('h')).toBeUndefined();
    cache.hearing(true);
    await cache.lookUp('h', () => Promise.resolve(row));
    expect(cache.get('h')).toEqual(row);
    cache.hearing(false);
    expect(cache.get('h')).toBeUndefined();
    cache.hearing(true);
    expect(cache.get('h')).toBeUndefined();
  });

  it('drops every key at any announced change', async () => {
    const cache = new ApiKeyCache();
    cache.hearing(true);
    await cache.lookUp('h', () => Promise.resolve(row));
    await cache.lookUp('g', () => Promise.resolve({ ...row, id: 'key_2', key_hash: 'g' }));
    cache.changed();
    expect(cache.get('h')).toBeUndefined();
    expect(cache.get('g')).toBeUndefined();
  });

  it('keeps no unknown key', async () => {
    const cache = new ApiKeyCache();
    cache.hearing(true);
    expect(await cache.lookUp('h', () => Promise.resolve(undefined))).toBeUndefined();
    expect(cache.get('h')).toBeUndefined();
  });

  it('gives the requests that ask while a key is looked up that one lookup', async () => {
    const cache = new ApiKeyCache();
    cache.hearing(true);
    const loads = pendingLoads();
    const asked = [cache.lookUp('h', loads.load), cache.lookUp('h', loads.load), cache.lookUp('h', loads.load)];
    const other = cache.lookUp('g', loads.load);
    expect(loads.calls).toBe(2);
    loads.answer(0, row);
    loads.answer(1, undefined);
    expect(await Promise.all(asked)).toEqual([row, row, row]);
    expect(await other).toBeUndefined();
    expect(cache.get('h')).toEqual(row);
  });

  it('does not share or keep a lookup that a change overtook while it ran', async () => {
    const cache = new ApiKeyCache();
    cache.hearing(true);
    const loads = pendingLoads();
    const before = cache.lookUp('h', loads.load);
    cache.changed();
    const after = cache.lookUp('h', loads.load);
    expect(loads.calls).toBe(2);
    loads.answer(1, revoked);
    loads.answer(0, row);
    expect(await after).toEqual(revoked);
    expect(await before).toEqual(row);
    expect(cache.get('h')).toEqual(revoked);
  });

  it('shares no lookup while it cannot hear the database', async () => {
    const cache = new ApiKeyCache();
    const loads = pendingLoads();
    const asked = [cache.lookUp('h', loads.load), cache.lookUp('h', loads.load)];
    expect(loads.calls).toBe(2);
    loads.answer(0, row);
    loads.answer(1, revoked);
    expect(await Promise.all(asked)).toEqual([row, revoked]);
  });

  it('passes a failed lookup to everyone waiting on it, and the next request looks again', async () => {
    const cache = new ApiKeyCache();
    cache.hearing(true);
    const loads = pendingLoads();
    const asked = [cache.lookUp('h', loads.load), cache.lookUp('h', loads.load)];
    loads.fail(0);
    await expect(asked[0]).rejects.toThrow('connection lost');
    await expect(asked[1]).rejects.toThrow('connection lost');
    const again = cache.lookUp('h', loads.load);
    expect(loads.calls).toBe(2);
    loads.answer(1, row);
    expect(await again).toEqual(row);
  });
});
