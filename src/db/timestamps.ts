import pg from 'pg';

const TIMESTAMPTZ_OID = 1184;
const ZERO = 48;

/** The number the digits of `text` from `start` to `end` spell, or NaN if any is not a digit. */
function digitsAt(text: string, start: number, end: number): number {
  let value = 0;
  for (let i = start; i < end; i++) {
    const digit = text.charCodeAt(i) - ZERO;
    if (digit < 0 || digit > 9) return Number.NaN;
    value = value * 10 + digit;
  }
  return value;
}

/** pg's own type parsers (typed loosely by pg-types). */
const pgTypeParser = pg.types.getTypeParser as (oid: number, format?: 'text' | 'binary') => (value: string) => unknown;
const parseAnyTimestamptz = pgTypeParser(TIMESTAMPTZ_OID, 'text') as (text: string) => Date;

/** pg's parser reads only the text form, with a space between the date and the time. */
function parseOther(text: string): Date {
  return parseAnyTimestamptz(text.replace('T', ' '));
}

/**
 * A timestamptz as Postgres sends it in its default ISO style, `2026-11-26 09:04:15.186+00` (the
 * fraction and the offset's minutes and seconds optional), or inside JSON,
 * `2026-11-26T09:04:15.186+00:00`, read by position: no regular expression and no strings made,
 * where pg's own parser allocates a dozen per value (a page of 25 posts has 75). Anything else
 * (years before 1000 or after 9999, BC, infinity) goes to pg's own parser.
 */
export function parseTimestamptz(text: string): Date {
  const length = text.length;
  if (length < 22 || text[4] !== '-' || text[7] !== '-' || (text[10] !== ' ' && text[10] !== 'T') || text[13] !== ':' || text[16] !== ':')
    return parseOther(text);
  const year = digitsAt(text, 0, 4);
  let i = 19;
  let milliseconds = 0;
  if (text[i] === '.') {
    // Postgres keeps microseconds; a Date keeps whole milliseconds, so the rest is cut off as pg does.
    const start = ++i;
    while (i < length && text.charCodeAt(i) >= ZERO && text.charCodeAt(i) <= ZERO + 9) i++;
    const kept = Math.min(i - start, 3);
    milliseconds = digitsAt(text, start, start + kept) * 10 ** (3 - kept);
  }
  const sign = text[i] === '+' ? 1 : text[i] === '-' ? -1 : 0;
  const rest = length - i - 1;
  if (year < 1000 || sign === 0 || (rest !== 2 && rest !== 5 && rest !== 8) || (rest > 2 && text[i + 3] !== ':') || (rest > 5 && text[i + 6] !== ':')) {
    return parseOther(text);
  }
  const offsetSeconds =
    digitsAt(text, i + 1, i + 3) * 3600 + (rest > 2 ? digitsAt(text, i + 4, i + 6) * 60 : 0) + (rest > 5 ? digitsAt(text, i + 7, i + 9) : 0);
  const utc = Date.UTC(
    year,
    digitsAt(text, 5, 7) - 1,
    digitsAt(text, 8, 10),
    digitsAt(text, 11, 13),
    digitsAt(text, 14, 16),
    digitsAt(text, 17, 19),
    milliseconds,
  );
  const time = utc - sign * offsetSeconds * 1000;
  return Number.isNaN(time) ? parseOther(text) : new Date(time);
}

/** pg's type parsers, with timestamptz read by `parseTimestamptz`. */
export const HERALD_TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === TIMESTAMPTZ_OID && format !== 'binary' ? parseTimestamptz : pgTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};
