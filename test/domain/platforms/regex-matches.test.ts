import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchesOf } from '../../../src/domain/platforms/regex-matches.js';

const summary = (matches: Iterable<RegExpMatchArray>) => [...matches].map((m) => ({ index: m.index, groups: [...m] }));

describe('matchesOf', () => {
  // Patterns that can match empty (so the search must step over a character, by code point with u or v) and ones that cannot.
  const patterns = [/a*/g, /(?:)/gu, /\p{L}*/gu, new RegExp('\\p{RGI_Emoji}', 'gv'), /(b)(c)?/g, /x|$/g, /[\uD83D]/g];
  const texts = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'x', ' ', '😀', '\uD83D', '\uDE00', 'é', '👨‍👩‍👧'), maxLength: 30 });

  it('finds what matchAll finds, in the same order, with the same groups', () => {
    fc.assert(
      fc.property(fc.constantFrom(...patterns), texts, (pattern, text) => {
        expect(summary(matchesOf(pattern, text))).toEqual(summary(text.matchAll(pattern)));
      }),
    );
  });

  it('gives the same answer when the pattern is used again while its matches are read', () => {
    const pattern = /b/g;
    const outer = matchesOf(pattern, 'abcb').map((m) => [m.index, matchesOf(pattern, 'bb').length]);
    expect(outer).toEqual([
      [1, 2],
      [3, 2],
    ]);
  });

  it('refuses a pattern without the g flag, which would find its first match forever', () => {
    expect(() => matchesOf(/a/, 'aa')).toThrow(/global/);
  });
});
