// Counting units. Every platform counts text its own way and a length limit is only
// meaningful with its unit, so each limit in the table names one of these.

import { isAscii } from './ascii.js';
import { matchesOf } from './regex-matches.js';
import { findMastodonMentions, findMastodonUrls, findXUrls, type TextRange } from './urls.js';

export const TEXT_UNITS = ['weighted', 'graphemes', 'graphemesUrl23', 'graphemesEmojiBytes', 'utf16', 'utf8Bytes'] as const;

/**
 * - weighted: X (twitter-text config v3): NFC first; each link 23; each emoji sequence 2;
 *   code points in U+0000-U+10FF, U+2000-U+200D, U+2010-U+201F, U+2032-U+2037 count 1,
 *   all others 2.
 * - graphemes: extended grapheme clusters (Bluesky).
 * - graphemesUrl23: graphemes, each link with a protocol 23, "@user@host" as "@user" (Mastodon).
 * - graphemesEmojiBytes: graphemes, an emoji grapheme costs its UTF-8 bytes (Threads).
 * - utf16: UTF-16 code units, JavaScript's string length (TikTok and the platforms that
 *   only say "characters").
 * - utf8Bytes: UTF-8 encoded length.
 */
export type TextUnit = (typeof TEXT_UNITS)[number];

const URL_LENGTH = 23;

const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });

// Node 20's Intl.Segmenter copies the whole input into every segment it yields, so one
// call over a long caption is quadratic (70k characters: seconds and gigabytes). The text
// is therefore segmented in short chunks cut only where UAX #29 always breaks: before a
// character that nothing joins onto (B) and after one that joins onto nothing (A).
const CHUNK = 256;
const CHUNK_WINDOW = 2048;
const BREAK_BEFORE = /^[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Common}]$/u;
const NOT_BREAK_BEFORE = /^[\p{M}\p{Cf}\p{Emoji_Modifier}\p{Regional_Indicator}\r\uFF9E\uFF9F]$/u;
// Cf covers ZWJ and the format-character Prepends; the rest are the Prepend letters.
const NOT_BREAK_AFTER = /^[\p{Cf}\r\u0D4E\u{111C2}\u{111C3}\u{113D1}\u{1193F}\u{11941}\u{11A84}-\u{11A89}\u{11D46}\u{11F02}]$/u;

function isSafeCut(text: string, index: number): boolean {
  const code = text.charCodeAt(index);
  if (isLowSurrogate(code)) return false; // inside a surrogate pair
  const after = String.fromCodePoint(text.codePointAt(index) ?? 0);
  const beforeStart = isLowSurrogate(text.charCodeAt(index - 1)) ? index - 2 : index - 1;
  const before = String.fromCodePoint(text.codePointAt(beforeStart) ?? 0);
  return BREAK_BEFORE.test(after) && !NOT_BREAK_BEFORE.test(after) && !NOT_BREAK_AFTER.test(before);
}

/**
 * Extended grapheme clusters of `text`, in order. Between two ASCII characters UAX #29 always
 * breaks, but inside CR LF, and no rule looks across such a break (the ones that look back, for
 * emoji and flags, only pass over non-ASCII characters); so only the stretches around non-ASCII
 * characters go to the segmenter, each on its own: a caption with an emoji or two is not copied
 * into every one of its graphemes (60 µs for 120 characters, now 9).
 */
export function* graphemes(text: string): Generator<string> {
  let start = 0;
  for (let at = 1; at <= text.length; at++) {
    if (at < text.length && !breaksBetweenAscii(text, at)) continue;
    if (at - start === 1) yield text.charAt(start);
    else yield* segmentedInChunks(text.slice(start, at));
    start = at;
  }
}

function breaksBetweenAscii(text: string, index: number): boolean {
  const before = text.charCodeAt(index - 1);
  const after = text.charCodeAt(index);
  return before < 0x80 && after < 0x80 && !(before === 0x0d && after === 0x0a);
}

function* segmentedInChunks(text: string): Generator<string> {
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + CHUNK);
    while (end < text.length && !isSafeCut(text, end)) {
      end += 1;
      // No safe cut in a long run of marks or joiners: cut after a whole code point
      // anyway. Only such a pathological run can be miscounted, by 1 per cut.
      if (end - start >= CHUNK + CHUNK_WINDOW && !isLowSurrogate(text.charCodeAt(end))) break;
    }
    for (const { segment } of segmenter.segment(text.slice(start, end))) yield segment;
    start = end;
  }
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

export function utf16Length(text: string): number {
  return text.length;
}

export function utf8ByteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

function asciiGraphemeLength(text: string): number {
  let count = text.length;
  for (let at = text.indexOf('\r\n'); at !== -1; at = text.indexOf('\r\n', at + 2)) count -= 1;
  return count;
}

export function graphemeLength(text: string): number {
  if (isAscii(text)) return asciiGraphemeLength(text);
  let count = 0;
  for (const _ of graphemes(text)) count += 1;
  return count;
}

// Built at runtime: the `v` flag (needed for the RGI_Emoji string property) is newer than
// the ES2022 target, but Node 20 supports it. RGI_Emoji follows the runtime's Unicode
// data (Unicode 17 on Node 20.20), unlike twitter-text's bundled 2019 list; an emoji
// newer than the runtime is weighed per code point, which can only overcount. twitter-text
// (its conformance file) also takes a keycap without U+FE0F ("1\u20E3") as one emoji.
const RGI_EMOJI = new RegExp('\\p{RGI_Emoji}|[0-9#*]\\u20E3', 'gv');

function xCodePointWeight(codePoint: number): number {
  if (
    codePoint <= 0x10ff ||
    (codePoint >= 0x2000 && codePoint <= 0x200d) ||
    (codePoint >= 0x2010 && codePoint <= 0x201f) ||
    (codePoint >= 0x2032 && codePoint <= 0x2037)
  ) {
    return 1;
  }
  return 2;
}

function xSegmentLength(segment: string): number {
  // Every ASCII code point weighs 1, and no emoji sequence is ASCII alone.
  if (isAscii(segment)) return segment.length;
  // Same walk as twitter-text's parseTweet: an emoji sequence is one unit of 2 and any
  // code point outside a sequence is weighed on its own (so a lone ZWJ costs 1).
  let total = 0;
  let position = 0;
  for (const match of matchesOf(RGI_EMOJI, segment)) {
    const index = match.index ?? 0;
    for (const char of segment.slice(position, index)) total += xCodePointWeight(char.codePointAt(0) ?? 0);
    total += 2;
    position = index + match[0].length;
  }
  for (const char of segment.slice(position)) total += xCodePointWeight(char.codePointAt(0) ?? 0);
  return total;
}

/** X weighted length (twitter-text v3 `weightedLength`). */
export function xWeightedLength(text: string): number {
  const normalized = text.normalize('NFC');
  let total = 0;
  let position = 0;
  for (const url of findXUrls(normalized)) {
    total += xSegmentLength(normalized.slice(position, url.start)) + URL_LENGTH;
    position = url.end;
  }
  return total + xSegmentLength(normalized.slice(position));
}

/** Mastodon length: graphemes after links become 23 characters and mentions lose their domain. */
export function mastodonLength(text: string): number {
  type Entity = TextRange & { billedAs: string };
  const links: Entity[] = findMastodonUrls(text).map((r) => ({ ...r, billedAs: 'x'.repeat(URL_LENGTH) }));
  const candidates: Entity[] = [...links, ...findMastodonMentions(text)].sort((a, b) => a.start - b.start);
  // Extractor.remove_overlapping_entities: the earlier entity wins.
  const entities: Entity[] = [];
  for (const entity of candidates) {
    const previous = entities[entities.length - 1];
    if (previous === undefined || entity.start >= previous.end) entities.push(entity);
  }
  let countable = '';
  let position = 0;
  for (const entity of entities) {
    countable += text.slice(position, entity.start) + entity.billedAs;
    position = entity.end;
  }
  return graphemeLength(countable + text.slice(position));
}

// Threads publishes "emoji count as their UTF-8 bytes" without saying what an emoji is;
// any grapheme holding a pictographic, flag or keycap character is taken as one (the
// stricter reading: a text-style ©, 1 character elsewhere, costs its 2 bytes here).
const EMOJI_LIKE = /\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20E3/u;

/** Threads length: graphemes, with each emoji grapheme costing its UTF-8 byte length. */
export function threadsLength(text: string): number {
  if (isAscii(text)) return asciiGraphemeLength(text);
  let total = 0;
  for (const segment of graphemes(text)) {
    total += EMOJI_LIKE.test(segment) ? utf8ByteLength(segment) : 1;
  }
  return total;
}

export function countText(text: string, unit: TextUnit): number {
  switch (unit) {
    case 'weighted':
      return xWeightedLength(text);
    case 'graphemes':
      return graphemeLength(text);
    case 'graphemesUrl23':
      return mastodonLength(text);
    case 'graphemesEmojiBytes':
      return threadsLength(text);
    case 'utf16':
      return utf16Length(text);
    case 'utf8Bytes':
      return utf8ByteLength(text);
  }
}

/** The word used in messages: every unit reads as "characters" except raw bytes. */
export function unitWord(unit: TextUnit, count: number): string {
  if (unit === 'utf8Bytes') return count === 1 ? 'byte' : 'bytes';
  return count === 1 ? 'character' : 'characters';
}
