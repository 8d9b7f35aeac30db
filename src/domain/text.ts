import type { ErrorDetail } from './api-types.js';
import { DomainError } from './errors.js';

/*
 * Text is stored as sent, so it must be storable: Postgres refuses U+0000 in text and jsonb, and an
 * unpaired UTF-16 surrogate has no UTF-8 encoding (the driver would silently store U+FFFD instead).
 * With the `u` flag a well-formed surrogate pair is one code point above U+FFFF, outside the class,
 * so emoji and other astral characters pass; only a lone half matches D800–DFFF.
 */
const UNSTORABLE_CHARACTERS = String.raw`\u0000\uD800-\uDFFF`;

/**
 * The rule as a regular expression source, evaluated with the `u` flag. The spec states it as the
 * `pattern` of every free-text request string (Ajv compiles spec patterns with `u`); a test checks
 * that the spec's pattern is this one.
 */
export const STORABLE_TEXT_PATTERN = `^[^${UNSTORABLE_CHARACTERS}]*$`;

const STORABLE_TEXT = new RegExp(STORABLE_TEXT_PATTERN, 'u');
const FIRST_UNSTORABLE = new RegExp(`[${UNSTORABLE_CHARACTERS}]`, 'u');

export const STORABLE_TEXT_EXPECTED = 'text without NUL or unpaired surrogates';
const STORABLE_TEXT_MESSAGE = 'must not contain U+0000 (NUL) or an unpaired UTF-16 surrogate';

export function isStorableText(value: string): boolean {
  return STORABLE_TEXT.test(value);
}

/** Names the first character that cannot be stored and its index in UTF-16 code units, e.g. `U+0000 at index 3`. */
function firstUnstorable(value: string): string {
  const match = FIRST_UNSTORABLE.exec(value);
  if (!match) return 'storable text';
  const code = match[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
  return `U+${code} at index ${match.index}`;
}

/** The `details` item for text that cannot be stored, located at `path`. */
export function unstorableTextDetail(value: string, path: ErrorDetail['path']): ErrorDetail {
  return { code: 'invalid_string', expected: STORABLE_TEXT_EXPECTED, received: firstUnstorable(value), path, message: STORABLE_TEXT_MESSAGE };
}

/** For text from callers without a schema (the operator CLI): refuses it with one line naming the field. */
export function requireStorableText(value: string, name: string): void {
  if (!isStorableText(value)) {
    throw new DomainError('invalid_request', `${name} ${STORABLE_TEXT_MESSAGE}; got ${firstUnstorable(value)}`);
  }
}
