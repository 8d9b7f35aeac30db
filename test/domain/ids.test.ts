import { describe, expect, it } from 'vitest';
import { isWellFormedId, newId } from '../../src/domain/ids.js';

describe('ids', () => {
  it('are a type prefix and 26 Crockford base32 characters, distinct each time', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newId('post')));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^post_[0-9abcdefghjkmnpqrstvwxyz]{26}$/);
  });

  it('recognise only well-formed ids of their own type', () => {
    const id = newId('acc');
    expect(isWellFormedId('acc', id)).toBe(true);
    expect(isWellFormedId('post', id)).toBe(false);
    expect(isWellFormedId('acc', `${id}0`)).toBe(false);
    expect(isWellFormedId('acc', id.toUpperCase())).toBe(false);
    expect(isWellFormedId('acc', 'acc_iiiiiiiiiiiiiiiiiiiiiiiiii')).toBe(false);
  });
});
