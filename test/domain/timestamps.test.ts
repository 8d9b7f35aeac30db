import fc from 'fast-check';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { parseTimestamptz } from '../../src/db/timestamps.js';

const pgParse = (pg.types.getTypeParser as (oid: number, format: 'text') => (text: string) => Date | number)(1184, 'text');

/** A time in Postgres's ISO output style with the given fraction digits and UTC offset. */
function postgresText(time: number, fraction: string, offsetSeconds: number): string {
  const shifted = new Date(time + offsetSeconds * 1000).toISOString();
  const sign = offsetSeconds < 0 ? '-' : '+';
  const abs = Math.abs(offsetSeconds);
  const [h, m, s] = [Math.floor(abs / 3600), Math.floor((abs % 3600) / 60), abs % 60].map((n) => String(n).padStart(2, '0'));
  const offset = abs % 60 !== 0 ? `${h}:${m}:${s}` : abs % 3600 !== 0 ? `${h}:${m}` : h;
  return `${shifted.slice(0, 10)} ${shifted.slice(11, 19)}${fraction}${sign}${offset}`;
}

describe('parseTimestamptz', () => {
  it('reads what Postgres sends exactly as pg does, whatever the fraction and offset', () => {
    const times = fc.integer({ min: Date.UTC(1000, 0, 2), max: Date.UTC(9999, 11, 30) });
    const fractions = fc.oneof(fc.constant(''), fc.stringMatching(/^\.\d{1,6}$/));
    const offsets = fc.oneof(
      fc.constant(0),
      fc.integer({ min: -15 * 3600, max: 15 * 3600 }),
      fc.integer({ min: -15, max: 15 }).map((h) => h * 3600),
    );
    fc.assert(
      fc.property(times, fractions, offsets, (time, fraction, offset) => {
        const text = postgresText(Math.floor(time / 1000) * 1000, fraction, offset);
        expect(parseTimestamptz(text).getTime(), text).toBe((pgParse(text) as Date).getTime());
      }),
      { numRuns: 2000 },
    );
  });

  it('reads the form JSON gives a timestamptz (a T, the offset with minutes) as the text form', () => {
    const times = fc.integer({ min: Date.UTC(1000, 0, 2), max: Date.UTC(9999, 11, 30) });
    const fractions = fc.oneof(fc.constant(''), fc.stringMatching(/^\.\d{1,6}$/));
    const offsets = fc.integer({ min: -15 * 4, max: 15 * 4 }).map((quarters) => quarters * 900);
    fc.assert(
      fc.property(times, fractions, offsets, (time, fraction, offset) => {
        const text = postgresText(Math.floor(time / 1000) * 1000, fraction, offset);
        const [, zone = ''] = /[+-]\d{2}(:\d{2})?$/.exec(text) ?? [];
        const json = `${text.slice(0, 10)}T${text.slice(11)}${zone === '' ? ':00' : ''}`;
        expect(parseTimestamptz(json).getTime(), json).toBe((pgParse(text) as Date).getTime());
      }),
      { numRuns: 1000 },
    );
    for (const text of ['0999-12-31 23:59:59.5+00', '12020-01-01 00:00:00+00', '2020-01-01 00:00:00+00 BC']) {
      expect(parseTimestamptz(text.replace(' ', 'T')), text).toEqual(pgParse(text));
    }
  });

  it('leaves what it does not read by position to pg: early years, BC, infinity', () => {
    for (const text of [
      '0099-01-01 00:00:00+00',
      '0999-12-31 23:59:59.5+00',
      '2020-01-01 00:00:00+00 BC',
      'infinity',
      '-infinity',
      '12020-01-01 00:00:00+00',
    ]) {
      expect(parseTimestamptz(text), text).toEqual(pgParse(text));
    }
  });

  it('reads a value from Postgres as it is stored', () => {
    expect(parseTimestamptz('2026-11-26 09:04:15.186+00').toISOString()).toBe('2026-11-26T09:04:15.186Z');
    expect(parseTimestamptz('2026-11-26 10:04:15.123456+01').toISOString()).toBe('2026-11-26T09:04:15.123Z');
    expect(parseTimestamptz('2026-11-26 04:34:15-04:30').toISOString()).toBe('2026-11-26T09:04:15.000Z');
  });
});
