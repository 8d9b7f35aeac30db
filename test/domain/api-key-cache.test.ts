import { describe, expect, it } from 'vitest';
import { ApiKeyCache } from '../../src/domain/api-key-cache.js';

const row = { id: 'key_1', user_id: 'usr_1', key_hash: 'h', expires_at: null, revoked_at: null };

describe('ApiKeyCache', () => {
  it('keeps nothing and gives nothing while it cannot hear the database', () => {
    const cache = new ApiKeyCache();
    cache.keep('h', row, cache.mark());
    expect(cache.get('h')).toBeUndefined();
    cache.hearing(true);
    cache.keep('h', row, cache.mark());
    expect(cache.get('h')).toEqual(row);
    cache.hearing(false);
    expect(cache.get('h')).toBeUndefined();
    cache.hearing(true);
    expect(cache.get('h')).toBeUndefined();
  });

  it('drops every key at any announced change', () => {
    const cache = new ApiKeyCache();
    cache.hearing(true);
    cache.keep('h', row, cache.mark());
    cache.keep('g', { ...row, id: 'key_2', key_hash: 'g' }, cache.mark());
    cache.changed();
    expect(cache.get('h')).toBeUndefined();
    expect(cache.get('g')).toBeUndefined();
  });

  it('does not keep a lookup that a change overtook while it ran', () => {
    const cache = new ApiKeyCache();
    cache.hearing(true);
    const mark = cache.mark();
    cache.changed();
    cache.keep('h', row, mark);
    expect(cache.get('h')).toBeUndefined();
  });
});
