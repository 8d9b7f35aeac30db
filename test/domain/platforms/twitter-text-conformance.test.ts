import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { xWeightedLength } from '../../../src/domain/platforms/text-length.js';
import { findXUrls } from '../../../src/domain/platforms/urls.js';

// twitter-text's own conformance files (Apache-2.0, test/fixtures/twitter-text/LICENSE), taken
// unchanged from github.com/twitter/twitter-text at 30e2430: X counts a post's length with that
// library, so Herald's counter must give what it gives on every case the library is tested with.
const fixtures = join(import.meta.dirname, '../../fixtures/twitter-text');
interface Case<E> {
  description: string;
  text: string;
  expected: E;
}
const load = <T>(file: string): T => parse(readFileSync(join(fixtures, file), 'utf8'), { version: '1.1' }) as T;
const validate = load<{ tests: Record<string, Case<unknown>[]> }>('validate.yml').tests;
const extract = load<{ tests: Record<string, Case<unknown>[]> }>('extract.yml').tests;

describe('X weighted length against twitter-text (v3 configuration: emoji count 2)', () => {
  const cases = [...(validate.WeightedTweetsWithDiscountedEmojiCounterTest ?? []), ...(validate.UnicodeDirectionalMarkerCounterTest ?? [])] as Case<{
    weightedLength: number;
  }>[];
  it('has the cases', () => expect(cases.length).toBeGreaterThan(20));
  it.each(cases.map((c) => [c.description, c] as const))('%s', (_name, c) => {
    expect(xWeightedLength(c.text)).toBe(c.expected.weightedLength);
  });
});

describe('links X finds, against twitter-text', () => {
  const withIndices = [...(extract.urls_with_indices ?? []), ...(extract.urls_with_directional_markers ?? [])] as Case<{ url: string }[]>[];
  const cases = [
    ...(extract.urls ?? []),
    ...(extract.tco_urls_with_params ?? []),
    ...withIndices.map((c) => ({ ...c, expected: c.expected.map((e) => e.url) })),
  ] as Case<string[]>[];
  it('has the cases', () => expect(cases.length).toBeGreaterThan(80));
  it.each(cases.map((c) => [c.description, c] as const))('%s', (_name, c) => {
    expect(findXUrls(c.text).map((range) => c.text.slice(range.start, range.end))).toEqual(c.expected);
  });
});
