import { describe, expect, it } from 'vitest';
import { isObject, listOperations, loadSpec, resolve, type JsonObject } from '../../scripts/spec-document.js';
import { isStorableText, STORABLE_TEXT_PATTERN } from '../../src/domain/text.js';
import { createValidatorCompiler } from '../../src/api/validator.js';

// The storable-text rule lives once in the domain (src/domain/text.ts); the spec states it as the
// `pattern` of every free-text request string. These tests keep the two the same rule, and make a
// new request field that forgets it fail here rather than with a 500 from the database.

const spec = loadSpec();

/**
 * Strings that are not free text, by operation and place: ids are looked up, never stored as
 * text (an id holding NUL is simply not the caller's), and threadParts keys are account ids.
 */
const IDS = new Set(
  ['createPost', 'updatePost', 'validatePost'].flatMap((op) => [
    `${op} accountIds[]`,
    `${op} mediaIds[]`,
    `${op} accountOverrides[].accountId`,
    `${op} threadParts (keys)`,
  ]),
);

interface TextPlace {
  place: string;
  pattern: unknown;
}

/** Every string a request body can carry (values and map keys), with the pattern it must match. */
function textPlaces(node: unknown, place: string, out: TextPlace[], seen: Set<unknown>): void {
  const schema = resolve(spec, node);
  if (!isObject(schema) || seen.has(schema)) return;
  const inner = new Set(seen).add(schema);
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  // Enumerations, constants and formats (date-time, binary) are closed grammars, not free text.
  const closed = schema.enum !== undefined || schema.const !== undefined || schema.format !== undefined;
  if (types.includes('string') && !closed) out.push({ place, pattern: schema.pattern });
  for (const [name, child] of Object.entries(isObject(schema.properties) ? schema.properties : {})) {
    textPlaces(child, place === '' ? name : `${place}.${name}`, out, inner);
  }
  if (isObject(schema.additionalProperties)) {
    const keys = resolve(spec, schema.propertyNames);
    out.push({ place: `${place} (keys)`, pattern: isObject(keys) ? keys.pattern : undefined });
    textPlaces(schema.additionalProperties, `${place}.*`, out, inner);
  }
  if (schema.items !== undefined) textPlaces(schema.items, `${place}[]`, out, inner);
  for (const k of ['oneOf', 'anyOf', 'allOf'] as const) {
    if (Array.isArray(schema[k])) for (const member of schema[k]) textPlaces(member, place, out, inner);
  }
}

function requestTextPlaces(): TextPlace[] {
  const all: TextPlace[] = [];
  for (const op of listOperations(spec)) {
    const body = resolve(spec, op.operation.requestBody);
    if (!isObject(body) || !isObject(body.content)) continue;
    const out: TextPlace[] = [];
    for (const media of Object.values(body.content)) {
      if (isObject(media)) textPlaces(media.schema, '', out, new Set());
    }
    // Places read like `createPost accountOverrides[].captionOverride`.
    all.push(...out.map((p) => ({ ...p, place: `${op.operationId ?? op.path} ${p.place}` })));
  }
  return all;
}

describe('the storable-text rule', () => {
  it('is stated in the spec exactly as the domain has it', () => {
    const caption = (spec.components as { schemas: Record<string, JsonObject & { properties: Record<string, JsonObject> }> }).schemas.PostCreateInput!
      .properties.caption!;
    expect(caption.pattern).toBe(STORABLE_TEXT_PATTERN);
  });

  it('is the pattern of every free-text string and map key of every request body; only ids go without it', () => {
    const places = requestTextPlaces();
    const free = places.filter((p) => !IDS.has(p.place));
    expect(free.filter((p) => p.pattern !== STORABLE_TEXT_PATTERN).map((p) => p.place)).toEqual([]);
    // The walk reaches every place this rule was written for, and every id it exempts still exists.
    expect(free.map((p) => p.place)).toEqual(
      expect.arrayContaining([
        'createPost caption',
        'createPost firstComment',
        'createPost accountOverrides[].captionOverride',
        'createPost accountOverrides[].fields (keys)',
        'createPost accountOverrides[].fields.*',
        'createPost accountOverrides[].fields.*[]',
        'createPost threadParts.*[]',
        'uploadMedia altText',
      ]),
    );
    expect(places.map((p) => p.place)).toEqual(expect.arrayContaining([...IDS]));
  });

  it('is compiled by the request validator with the u flag: a surrogate pair passes, a lone half does not', () => {
    const validate = createValidatorCompiler()({ schema: { type: 'string', pattern: STORABLE_TEXT_PATTERN }, httpPart: 'body', method: 'POST', url: '/' }) as (
      v: unknown,
    ) => boolean;
    expect(validate('launch \u{1F680} day')).toBe(true);
    expect(validate('\ud83d')).toBe(false);
    expect(validate('\ude80x')).toBe(false);
    expect(validate('a\u0000b')).toBe(false);
  });

  it('accepts any text but NUL and unpaired surrogates', () => {
    for (const text of ['', 'plain', 'é ü ß', '\u{1F600}\u{1F44D}\u{1F3FD}', '\uFFFD', '\uFFFF', '\u0001\u007F', 'a\ud83d\ude00b'])
      expect(isStorableText(text)).toBe(true);
    for (const text of ['\u0000', 'end\u0000', '\ud800', '\udbff\udbff', '\udc00\ud800', 'x\ud83dy']) expect(isStorableText(text)).toBe(false);
  });
});
