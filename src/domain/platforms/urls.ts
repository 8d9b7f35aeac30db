// Link detection for the two platforms that bill a link at a fixed 23 characters (X and
// Mastodon). Both platforms decide what a link is with twitter-text's URL extractor, so
// this is a port of that extractor's rules rather than a generic URL regex: a generic one
// would disagree on scheme-less links ("readme.md" is a link on X, "node.js" is not) and
// on where a link ends ("(https://x.com/a)." stops before ")."), and each disagreement
// moves the count by up to 22. The npm package `twitter-text` is not used: its last
// release bundles 2019 emoji data (so newer emoji sequences are miscounted) and pulls in
// core-js 2; the URL rules themselves are stable and small enough to own.

// The package, not Node's deprecated built-in of the same name (which a bare 'punycode' would load).
import punycode from 'punycode/punycode.js';
import { matchesOf } from './regex-matches.js';
import { TWITTER_TEXT_TLDS } from './tlds.js';

/** Half-open UTF-16 range [start, end) of a detected link. */
export interface TextRange {
  start: number;
  end: number;
}

const LATIN_ACCENTS =
  '\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u00FF\\u0100-\\u024F\\u0253\\u0254\\u0256\\u0257' +
  '\\u0259\\u025B\\u0263\\u0268\\u026F\\u0272\\u0289\\u028B\\u02BB\\u0300-\\u036F\\u1E00-\\u1EFF';
const CYRILLIC = '\\u0400-\\u04FF';
const DIRECTIONAL_MARKERS = '\\u202A-\\u202E\\u061C\\u200E\\u200F\\u2066-\\u2069';
const INVALID_CHARS = '\\uFFFE\\uFEFF\\uFFFF';
const SPACES = '\\x09-\\x0D\\x20\\x85\\xA0\\u1680\\u180E\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000';
const DOMAIN_PUNCTUATION = "!'#%&()*+,\\\\\\-./:;<=>?@\\[\\]^_{|}~$";

// Longest first, so an alternation never settles on a prefix of a longer TLD.
function tldAlternation(extra: readonly string[]): string {
  const all = [...TWITTER_TEXT_TLDS, ...extra].sort((a, b) => b.length - a.length);
  return `(?:(?:${all.join('|')})(?=[^0-9a-z@+\\-]|$)|xn--[\\-0-9a-z]+)`;
}

// Labels are capped at 63 characters and domains at 127 labels, as DNS allows. twitter-text
// has no cap, which makes its matching quadratic on input like "a.a.a.a..." (seconds for
// tens of kilobytes); with the cap it is linear. The only difference: an impossible
// domain with a 64+ character label is not a link here, so it costs its full length.
const DOMAIN_CHAR = `[^${DOMAIN_PUNCTUATION}${SPACES}${INVALID_CHARS}${DIRECTIONAL_MARKERS}]`;
const SUBDOMAIN = `(?:(?:${DOMAIN_CHAR}(?:[_\\-]|${DOMAIN_CHAR}){0,61})?${DOMAIN_CHAR}\\.)`;
const DOMAIN_NAME = `(?:(?:${DOMAIN_CHAR}(?:-|${DOMAIN_CHAR}){0,61})?${DOMAIN_CHAR}\\.)`;
const PRECEDING = `(?:[^A-Za-z0-9@\\uFF20$#\\uFF03${INVALID_CHARS}]|[${DIRECTIONAL_MARKERS}]|^)`;

function domain(tlds: string): string {
  return `(?:${SUBDOMAIN}{0,126}${DOMAIN_NAME}${tlds})`;
}

function balancedParens(pathChar: string): string {
  return `\\((?:${pathChar}+|(?:${pathChar}*\\(${pathChar}+\\)${pathChar}*))\\)`;
}

// --- X (twitter-text 3 as published) -------------------------------------------------

const X_PATH_CHAR = `[a-z${CYRILLIC}0-9!*';:=+,.$/%#\\[\\]\\-\\u2013_~@|&${LATIN_ACCENTS}]`;
const X_PARENS = balancedParens(X_PATH_CHAR);
const X_PATH_END = `[+\\-a-z${CYRILLIC}0-9=_#/${LATIN_ACCENTS}]`;
// The ending alternative is deliberately ungrouped: twitter-text's JS and Java sources
// concatenate "...]|(?:parens)" without a group, so a bare "(...)" is a whole path
// segment there and "https://a.com/path.(x)" stops before ".(x)".
const X_PATH = `(?:(?:${X_PATH_CHAR}*(?:${X_PARENS}${X_PATH_CHAR}*)*${X_PATH_END}|${X_PARENS})|(?:@${X_PATH_CHAR}+/))`;
const X_QUERY_CHAR = "[a-z0-9!?*'@();:&=+$/%#\\[\\]\\-_.,~|]";
const X_QUERY_END = '[a-z0-9\\-_&=#/]';
const X_QUERY = `(?:\\?${X_QUERY_CHAR}*${X_QUERY_END})`;

// Groups: 1 preceding char, 2 url, 3 protocol, 4 domain, 5 path. No `u` flag, as in
// twitter-text: an astral character is two code units there, and a low surrogate can
// start a domain, which decides where links begin after an emoji.
const X_URL = new RegExp(`(${PRECEDING})((https?://)?(${domain(tldAlternation([]))})(?::[0-9]+)?(/(?:${X_PATH})*)?${X_QUERY}?)`, 'gi');
const X_ASCII_DOMAIN = new RegExp(`(?:(?:[\\-a-z0-9${LATIN_ACCENTS}]{1,63})\\.){1,127}${tldAlternation([])}`, 'gi');
const X_ASCII_DOMAIN_ANYWHERE = new RegExp(X_ASCII_DOMAIN.source, 'i');
const X_TCO = new RegExp(`^https?://t\\.co/([a-z0-9]+)${X_QUERY}?`, 'i');
const MAX_URL_LENGTH = 4096;
const MAX_TCO_SLUG_LENGTH = 40;

// twitter-text's idna.toAscii: null when a label would be empty or longer than 63 once
// encoded, or when an "xn--" domain holds no ASCII domain at all.
function asciiDomainLength(domainPart: string): number | null {
  if (domainPart.startsWith('xn--') && !X_ASCII_DOMAIN_ANYWHERE.test(domainPart)) return null;
  let total = 0;
  for (const label of domainPart.split('.')) {
    const length = punycode.toASCII(label).length;
    if (length < 1 || length > 63) return null;
    total += length;
  }
  return total + domainPart.split('.').length - 1;
}

/**
 * Links as X finds them (twitter-text `extractUrlsWithIndices`): with or without
 * http(s)://; a scheme-less link needs a known TLD and only its ASCII domain part counts.
 */
export function findXUrls(text: string): TextRange[] {
  if (!text.includes('.')) return [];
  const ranges: TextRange[] = [];
  for (const match of matchesOf(X_URL, text)) {
    const before = match[1] ?? '';
    let url = match[2] ?? '';
    const protocol = match[3];
    const domainPart = match[4] ?? '';
    const path = match[5];
    const start = (match.index ?? 0) + before.length;
    let end = start + url.length;
    const asciiLength = asciiDomainLength(domainPart);
    if (asciiLength === null) continue;
    if ((protocol ?? 'https://').length + url.length + asciiLength - domainPart.length > MAX_URL_LENGTH) continue;

    if (protocol === undefined) {
      // "foo.com" glued to "-", "_", "." or "/" is part of something else, not a link.
      if (/[-_./]$/.test(before)) continue;
      let last: TextRange | null = null;
      let searchFrom = 0;
      for (const ascii of matchesOf(X_ASCII_DOMAIN, domainPart)) {
        const offset = domainPart.indexOf(ascii[0], searchFrom);
        searchFrom = offset + ascii[0].length;
        last = { start: start + offset, end: start + searchFrom };
        ranges.push(last);
      }
      if (last !== null && path !== undefined) last.end = end;
      continue;
    }

    // A t.co link ends at its slug: X does not let extra path characters ride along.
    const tco = X_TCO.exec(url);
    if (tco !== null) {
      if ((tco[1] ?? '').length > MAX_TCO_SLUG_LENGTH) continue;
      url = tco[0];
      end = start + url.length;
    }
    ranges.push({ start, end });
  }
  return ranges;
}

// --- Mastodon (twitter-text as patched in mastodon/config/initializers/twitter_regex.rb) ---

const UCHARS =
  '\\u{A0}-\\u{D7FF}\\u{F900}-\\u{FDCF}\\u{FDF0}-\\u{FFEF}\\u{10000}-\\u{1FFFD}\\u{20000}-\\u{2FFFD}' +
  '\\u{30000}-\\u{3FFFD}\\u{40000}-\\u{4FFFD}\\u{50000}-\\u{5FFFD}\\u{60000}-\\u{6FFFD}' +
  '\\u{70000}-\\u{7FFFD}\\u{80000}-\\u{8FFFD}\\u{90000}-\\u{9FFFD}\\u{A0000}-\\u{AFFFD}' +
  '\\u{B0000}-\\u{BFFFD}\\u{C0000}-\\u{CFFFD}\\u{D0000}-\\u{DFFFD}\\u{E1000}-\\u{EFFFD}' +
  '\\u{E000}-\\u{F8FF}\\u{F0000}-\\u{FFFFD}\\u{100000}-\\u{10FFFD}';
const M_PATH_CHAR = '[^\\p{White_Space}<>()?]';
const M_PARENS = balancedParens(M_PATH_CHAR);
const M_PATH_END = `(?:[^\\p{White_Space}()?!*"'\\u300C\\u300D<>;:=,.$%\\[\\]~&|@]|${M_PARENS})`;
const M_PATH = `(?:(?:${M_PATH_CHAR}*(?:${M_PARENS}${M_PATH_CHAR}*)*${M_PATH_END})|(?:${M_PATH_CHAR}+/))`;
const M_QUERY = `(?:\\?[a-z0-9!?*'();:&=+$/%#\\[\\]\\-_.,~|@^${UCHARS}]*[a-z0-9_&=#/\\-${UCHARS}])`;

// Mastodon only discounts links that carry a protocol (extract_url_without_protocol: false).
const MASTODON_URL = new RegExp(
  `(${PRECEDING})((?:https?|dat|dweb|ipfs|ipns|ssb|gopher|gemini)://` + `${domain(tldAlternation(['i2p']))}(?::[0-9]+)?(?:/(?:${M_PATH})*)?${M_QUERY}?)`,
  'giu',
);

/** Links as Mastodon's StatusLengthValidator finds them: a protocol is required. */
export function findMastodonUrls(text: string): TextRange[] {
  const ranges: TextRange[] = [];
  for (const match of matchesOf(MASTODON_URL, text)) {
    const start = (match.index ?? 0) + (match[1] ?? '').length;
    ranges.push({ start, end: start + (match[2] ?? '').length });
  }
  return ranges;
}

// Account::MENTION_RE; [[:word:]] is letters, marks, decimal digits and connectors.
const WORD = '\\p{L}\\p{M}\\p{Nd}\\p{Pc}';
const MASTODON_MENTION = new RegExp(`(?<![=/${WORD}])@([a-z0-9_]+(?:[.\\-]+[a-z0-9_]+)*)(?:@[${WORD}]+(?:[.\\-]+[${WORD}]+)*)?`, 'giu');

/** A mention and the local part it is billed as ("@user@host" costs "@user"). */
export interface MentionRange extends TextRange {
  billedAs: string;
}

export function findMastodonMentions(text: string): MentionRange[] {
  const ranges: MentionRange[] = [];
  for (const match of matchesOf(MASTODON_MENTION, text)) {
    const start = match.index ?? 0;
    ranges.push({ start, end: start + match[0].length, billedAs: `@${match[1] ?? ''}` });
  }
  return ranges;
}
