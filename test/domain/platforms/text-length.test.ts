import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import {
  countText,
  graphemeLength,
  graphemes,
  mastodonLength,
  threadsLength,
  utf16Length,
  utf8ByteLength,
  xWeightedLength,
} from '../../../src/domain/platforms/text-length.js';
import { findMastodonUrls, findXUrls } from '../../../src/domain/platforms/urls.js';

const FAMILY = '👨‍👩‍👧‍👦'; // 4 people joined by 3 ZWJ: 7 code points, 11 UTF-16 units, 25 bytes
const FAMILY_NEW = '🧑‍🧑‍🧒'; // Emoji 15.1, newer than twitter-text's bundled data
const HEART_ON_FIRE = '❤️‍🔥';
const HANDSHAKE_TONES = '🫱🏻‍🫲🏿';
const FLAG_JP = '🇯🇵';
const FLAG_SCOTLAND = '🏴󠁧󠁢󠁳󠁣󠁴󠁿'; // tag sequence
const KEYCAP_ONE = '1️⃣';
const THUMB_TONE = '👍🏽';
const E_ACUTE_DECOMPOSED = 'e\u0301';
const HANGUL_JAMO = '\u1100\u1161\u11A8'; // one syllable written as three jamo

describe('X weighted length (twitter-text v3)', () => {
  it.each([
    ['ASCII counts 1', 'hello', 5],
    ['empty', '', 0],
    ['Latin-1 and accents count 1', 'café ñ ü', 8],
    ['CJK counts 2', '日本語', 6],
    ['Hangul counts 2', '한국어', 6],
    ['Cyrillic and Arabic count 1', 'привет مرحبا', 12],
    ['U+2014 em dash is in a weight-1 range', '—', 1],
    ['U+2026 ellipsis is outside the weight-1 ranges', '…', 2],
    ['curly quotes count 1', '“quote”', 7],
    ['U+2122 trade mark counts 2', '™', 2],
    ['single emoji counts 2', '😀', 2],
    ['emoji with skin tone counts 2', THUMB_TONE, 2],
    ['ZWJ family counts 2', FAMILY, 2],
    ['Emoji 15.1 ZWJ family counts 2', FAMILY_NEW, 2],
    ['heart on fire counts 2', HEART_ON_FIRE, 2],
    ['handshake with two tones counts 2', HANDSHAKE_TONES, 2],
    ['flag counts 2', FLAG_JP, 2],
    ['two flags count 4', `${FLAG_JP}🇺🇸`, 4],
    ['tag-sequence flag counts 2', FLAG_SCOTLAND, 2],
    ['keycap counts 2', KEYCAP_ONE, 2],
    ['text-style copyright counts 1', '©', 1],
    ['emoji-style copyright counts 2', '©️', 2],
    ['decomposed é is NFC-normalised to 1', E_ACUTE_DECOMPOSED, 1],
    ['combining marks without a precomposed form count per code point', 'q\u0301\u0302', 3],
    ['NFC composes what it can and counts the rest per code point', 'a\u0301\u0302', 2],
    ['a lone ZWJ counts 1', 'a\u200Db', 3],
    ['emoji without FE0F joined by ZWJ is counted piece by piece', '❤\u200D🔥', 5],
  ])('%s', (_name, text, expected) => {
    expect(xWeightedLength(text)).toBe(expected);
  });

  it.each([
    ['a long https URL counts 23', 'https://example.com/a/very/long/path/that/is/far/beyond/23', 23],
    ['a short URL still counts 23', 'x.com', 23],
    ['a URL without protocol counts 23', 'example.com/path?q=1', 23],
    ['a country-code TLD makes a link', 'readme.md', 23],
    ['an unknown TLD is not a link', 'node.js', 7],
    ['trailing punctuation is not part of the link', 'see https://x.com/a.', 4 + 23 + 1],
    ['parentheses around a link are not part of it', '(https://x.com/a)', 1 + 23 + 1],
    ['balanced parentheses inside a path are', 'https://en.wikipedia.org/wiki/Foo_(bar)', 23],
    ['an e-mail address is not a link', 'user@example.com', 16],
    ['localhost is not a link', 'http://localhost', 16],
    ['ftp is not a link protocol', 'ftp://x.com', 11],
    ['an IDN domain is a link', 'https://例え.jp', 23],
    ['a t.co link counts 23', 'https://t.co/abc123', 23],
    ['two links count 23 each', 'a.com b.com', 23 + 1 + 23],
    ['a 64-character label is not a valid domain', `${'a'.repeat(64)}.com`, 68],
  ])('%s', (_name, text, expected) => {
    expect(xWeightedLength(text)).toBe(expected);
  });

  it('finds link ranges in UTF-16 offsets', () => {
    expect(findXUrls('go to x.com/a now')).toEqual([{ start: 6, end: 13 }]);
    expect(findXUrls('no links here')).toEqual([]);
  });
});

describe('grapheme length', () => {
  it.each([
    ['ASCII', 'hello', 5],
    ['ZWJ family is one', FAMILY, 1],
    ['Emoji 15.1 family is one', FAMILY_NEW, 1],
    ['flags are one each', `${FLAG_JP}🇺🇸`, 2],
    ['tag-sequence flag is one', FLAG_SCOTLAND, 1],
    ['keycap is one', KEYCAP_ONE, 1],
    ['skin tone is one', THUMB_TONE, 1],
    ['combining sequence is one', E_ACUTE_DECOMPOSED, 1],
    ['stacked combining marks are one', 'a\u0301\u0302\u0303', 1],
    ['Hangul jamo syllable is one', HANGUL_JAMO, 1],
    ['CRLF is one', '\r\n', 1],
    ['CJK', '日本語', 3],
  ])('%s', (_name, text, expected) => {
    expect(graphemeLength(text)).toBe(expected);
  });

  it('matches an unchunked count on long mixed text (chunk cuts never split a cluster)', () => {
    const pieces = ['hello ', FAMILY, FLAG_JP, '🇺', E_ACUTE_DECOMPOSED, HANGUL_JAMO, '\r\n', '日本', 'क्षि', '\u0301', ' '];
    let text = '';
    for (let index = 0; text.length < 20_000; index += 1) text += pieces[(index * 7) % pieces.length];
    // Reference: the segmenter itself over a few large slices cut just before "hello ".
    const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });
    let expected = 0;
    let start = 0;
    while (start < text.length) {
      const next = text.indexOf('hello ', start + 4000);
      const end = next === -1 ? text.length : next;
      expected += [...segmenter.segment(text.slice(start, end))].length;
      start = end;
    }
    expect(graphemeLength(text)).toBe(expected);
  });

  // Node 20's segmenter copies its input into every grapheme it yields: a long input given whole
  // would cost time and memory quadratic in its length, so none may reach it.
  it.each([
    ['with ASCII between', `hello wörld ${FAMILY} 日本語 `, 18],
    ['without any ASCII', `日本語${THUMB_TONE}${FLAG_JP}`, 5],
  ])('counts 1 MB of text %s, giving the segmenter a few thousand characters at a time at most', (_name, piece, graphemesInPiece) => {
    const text = piece.repeat(Math.ceil(1_000_000 / piece.length));
    const segment = vi.spyOn(Intl.Segmenter.prototype, 'segment');
    try {
      expect(graphemeLength(text)).toBe(graphemesInPiece * Math.ceil(1_000_000 / piece.length));
      expect(segment).toHaveBeenCalled();
      expect(segment.mock.calls.reduce((longest, [input]) => Math.max(longest, input.length), 0)).toBeLessThanOrEqual(4096);
    } finally {
      segment.mockRestore();
    }
  });
});

describe('Mastodon length', () => {
  it.each([
    ['plain text is graphemes', `hi ${FAMILY}`, 4],
    ['a link with protocol counts 23', `https://example.com/${'a'.repeat(100)}`, 23],
    ['a short link still counts 23', 'https://x.co', 23],
    ['a link without protocol counts in full', 'example.com', 11],
    ['other protocols count 23', 'gemini://example.com/page', 23],
    ['a remote mention counts as its local part', '@alice@mastodon.social', 6],
    ['a local mention counts in full', '@alice', 6],
    ['an e-mail address is not a mention', 'alice@example.com', 17],
    ['mention and link together', 'Hi @bob@example.org see https://joinmastodon.org/apps', 3 + 4 + 5 + 23],
  ])('%s', (_name, text, expected) => {
    expect(mastodonLength(text)).toBe(expected);
  });

  it('finds only links with a protocol', () => {
    expect(findMastodonUrls('a https://x.com/b c.com')).toEqual([{ start: 2, end: 17 }]);
  });
});

describe('Threads length (emoji by UTF-8 bytes)', () => {
  it.each([
    ['plain text is graphemes', 'hello', 5],
    ['an emoji costs its 4 bytes', '👍', 4],
    ['a skin-toned emoji costs 8', THUMB_TONE, 8],
    ['a ZWJ family costs 25', FAMILY, 25],
    ['a flag costs 8', FLAG_JP, 8],
    ['a keycap costs 7', KEYCAP_ONE, 7],
    ['a text-style copyright sign costs its 2 bytes', '©', 2],
    ['a combining sequence is one character', E_ACUTE_DECOMPOSED, 1],
    ['CJK is one per character', '日本語', 3],
  ])('%s', (_name, text, expected) => {
    expect(threadsLength(text)).toBe(expected);
  });
});

describe('UTF-16 and UTF-8 lengths', () => {
  it.each([
    ['ASCII', 'abc', 3, 3],
    ['é precomposed', 'é', 1, 2],
    ['é decomposed', E_ACUTE_DECOMPOSED, 2, 3],
    ['CJK', '日', 1, 3],
    ['astral emoji', '👍', 2, 4],
    ['ZWJ family', FAMILY, 11, 25],
  ])('%s', (_name, text, utf16, utf8) => {
    expect(utf16Length(text)).toBe(utf16);
    expect(utf8ByteLength(text)).toBe(utf8);
  });
});

describe('countText dispatches on the unit', () => {
  it.each([
    ['weighted', 2],
    ['graphemes', 1],
    ['graphemesUrl23', 1],
    ['graphemesEmojiBytes', 25],
    ['utf16', 11],
    ['utf8Bytes', 25],
  ] as const)('%s', (unit, expected) => {
    expect(countText(FAMILY, unit)).toBe(expected);
  });
});

describe('graphemes of text mixing ASCII with other characters', () => {
  const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });
  // ASCII beside what joins onto it or looks back past it: marks, joiners, emoji sequences, flags
  // (regional indicators pair up from the last break), a Prepend, CR LF and Hangul jamo.
  const mixedText = fc
    .array(
      fc.constantFrom(
        'a',
        ' ',
        '.',
        '\r',
        '\n',
        '\r\n',
        '\u0301',
        '\u200D',
        '\uFE0F',
        '👍',
        '🏽',
        '❤',
        '🔥',
        '🇯',
        '🇵',
        FAMILY,
        KEYCAP_ONE,
        '\u0600',
        '\u1100',
        '\u1161',
        'é',
        '日',
      ),
      { maxLength: 60 },
    )
    .map((parts) => parts.join(''));

  it('are the graphemes one segmenter call over the whole text gives, in order', () => {
    fc.assert(
      fc.property(mixedText, (text) => {
        expect([...graphemes(text)]).toEqual(Array.from(segmenter.segment(text), (s) => s.segment));
      }),
      { numRuns: 500 },
    );
  });
});

describe('all-ASCII text, counted without the segmenter', () => {
  const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });
  const segmented = (text: string) => [...segmenter.segment(text)].length;
  // Every ASCII character, with CR LF pairs and links (for X) more often than chance would give them.
  const asciiText = fc
    .array(
      fc.oneof(
        fc.integer({ min: 0, max: 127 }).map((code) => String.fromCharCode(code)),
        fc.constantFrom('\r\n', '\r\r\n', ' x.com/a ', 'https://example.com/p?q=1'),
      ),
      { maxLength: 200 },
    )
    .map((parts) => parts.join(''));

  it('counts graphemes as the segmenter does', () => {
    fc.assert(
      fc.property(asciiText, (text) => {
        expect(graphemeLength(text)).toBe(segmented(text));
      }),
    );
  });

  it('counts Threads length as one per grapheme: no ASCII grapheme is an emoji', () => {
    fc.assert(
      fc.property(asciiText, (text) => {
        expect(threadsLength(text)).toBe(segmented(text));
      }),
    );
  });

  it('weighs every ASCII character 1 for X, and each link 23', () => {
    fc.assert(
      fc.property(asciiText, (text) => {
        const links = findXUrls(text);
        const linked = links.reduce((sum, link) => sum + link.end - link.start, 0);
        expect(xWeightedLength(text)).toBe(text.length - linked + 23 * links.length);
      }),
    );
  });
});
