// accountOverrides[].fields are judged by the spec's schema for the account's platform
// (XFields … RedditFields, copied into generated/platform-fields.ts), compiled once.
// Ajv gives the verdict and the errors; this module only puts the first of them (unknown key,
// then field by field in the spec's order) into the words of the other platform messages.

import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { platformFieldSchemas } from '../../../generated/platform-fields.js';
import { describeValue, orList, plural } from './format.js';
import type { FieldType, PlatformRules } from './types.js';

function createAjv(): Ajv {
  const ajv = new Ajv({
    // Every error is collected so that the one reported does not depend on Ajv's keyword order.
    allErrors: true,
    // Errors then carry the failing value and the schema around the keyword (x-patternDescription).
    verbose: true,
    strict: true,
    // Lengths in UTF-16 code units, as PlatformField and the schemas say (Ajv counts code points
    // otherwise). Ajv 8 marks the option deprecated but it is the only switch for this; its notice
    // is all this instance would log (strict problems throw), so the logger is off.
    unicode: false,
    logger: false,
    // The service only links to web pages: "uri" is an absolute http or https URL (PlatformField.format).
    formats: { uri: isWebUrl },
  });
  ajv.addVocabulary([
    // Words for a pattern, used in the message; no validation of its own.
    'x-patternDescription',
    // Judged with the media, which the fields cannot see (the engine's checkFields).
    'x-excludesMedia',
    // JSON Schema cannot sum item lengths; YouTube's tag budget needs it.
    {
      keyword: 'x-maxTotalLength',
      type: 'array',
      schemaType: 'number',
      errors: false,
      validate: (max: number, items: readonly unknown[]) => totalLength(items) <= max,
    },
  ]);
  return ajv;
}

// Compiled together on first use and kept for the life of the process, never per request; not at
// import, so that a CLI command which never checks a post does not pay for the compilation.
let validators: ReadonlyMap<string, ValidateFunction> | undefined;

function validatorFor(platformId: string): ValidateFunction {
  if (validators === undefined) {
    const ajv = createAjv();
    validators = new Map(Object.entries(platformFieldSchemas).map(([id, schema]) => [id, ajv.compile(schema)]));
  }
  const validate = validators.get(platformId);
  if (validate === undefined) throw new Error(`the spec has no fields schema for platform ${platformId}`);
  return validate;
}

/** "<Platform> field "<key>" <rule>; got <actual>" (or an unknown or missing key) without the where; null when valid. */
export function findFieldsViolation(platform: PlatformRules, fields: Readonly<Record<string, unknown>>): string | null {
  const validate = validatorFor(platform.id);
  if (validate(fields)) return null;
  const keys = platform.fields.map((field) => field.key);
  const ranked = (validate.errors ?? []).map((error) => ({ error, rank: rank(error, keys) }));
  ranked.sort((a, b) => compareRanks(a.rank, b.rank));
  const first = ranked[0]?.error;
  if (first === undefined) return null;
  const name = platform.displayName;
  if (first.keyword === 'additionalProperties') {
    const allowed = keys.length === 0 ? 'no fields' : `fields ${orList(keys)}`;
    return `${name} allows ${allowed}; got ${describeValue(first.params.additionalProperty)}`;
  }
  if (first.keyword === 'required') return `${name} requires field "${String(first.params.missingProperty)}"; got none`;
  const [key = '', item] = pathOf(first);
  return `${name} field "${key}" ${describeProblem(first, fields[key], item)}`;
}

// Priority of the keywords that judge one value, in the order the rules were always checked.
const VALUE_KEYWORDS = ['enum', 'minimum', 'maximum', 'maxItems', 'minLength', 'maxLength', 'pattern', 'format'];

/**
 * Which error is reported: unknown keys first (in the request's key order, as Ajv lists them),
 * then field by field in the spec's order; within a field a missing value, a wrong type, the
 * value's own rules, its items in order, and last the total length of the items.
 */
function rank(error: ErrorObject, keys: readonly string[]): number[] {
  if (error.keyword === 'additionalProperties') return [0];
  const [key, item] = pathOf(error);
  const fieldIndex = keys.indexOf(error.keyword === 'required' ? String(error.params.missingProperty) : (key ?? ''));
  const field = fieldIndex === -1 ? keys.length : fieldIndex;
  if (error.keyword === 'required') return [1, field, 0];
  if (error.keyword === 'type') return [1, field, 1];
  if (error.keyword === 'x-maxTotalLength') return [1, field, 4];
  const keyword = VALUE_KEYWORDS.indexOf(error.keyword);
  return item === undefined ? [1, field, 2, keyword] : [1, field, 3, item, keyword];
}

function compareRanks(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const difference = (a[i] ?? -1) - (b[i] ?? -1);
    if (difference !== 0) return difference;
  }
  return 0;
}

/** [field key, item index] from an instance path such as "/tags/2"; keys are plain camelCase names. */
function pathOf(error: ErrorObject): [string | undefined, number | undefined] {
  const [, key, item] = error.instancePath.split('/');
  return [key, item === undefined ? undefined : Number(item)];
}

const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: 'a string',
  boolean: 'true or false',
  integer: 'an integer',
  array: 'an array of strings',
} satisfies Record<FieldType, string>;

/** "<rule>; got <actual>" for one field. */
function describeProblem(error: ErrorObject, value: unknown, item: number | undefined): string {
  if (error.keyword === 'type') {
    // Only arrays have items, and a wrong item is reported for the whole value: "must be an array of strings; got an array".
    const type = item === undefined ? String(error.params.type) : 'array';
    return `must be ${TYPE_WORDS[type] ?? type}; got ${describeValue(value)}`;
  }
  if (error.keyword === 'x-maxTotalLength') {
    return `allows at most ${Number(error.schema)} characters in total; got ${totalLength(error.data as readonly unknown[])}`;
  }
  const rule = describeRule(error);
  return item === undefined ? rule : `item ${item + 1} ${rule}`;
}

function describeRule(error: ErrorObject): string {
  const { params, data } = error;
  switch (error.keyword) {
    case 'enum':
      return `allows ${orList((params.allowedValues as unknown[]).map((option) => JSON.stringify(option)))}; got ${describeValue(data)}`;
    case 'minimum':
      return `allows at least ${Number(params.limit)}; got ${describeValue(data)}`;
    case 'maximum':
      return `allows at most ${Number(params.limit)}; got ${describeValue(data)}`;
    case 'minLength':
      return `allows at least ${plural(Number(params.limit), 'character')}; got ${String(data).length}`;
    case 'maxLength':
      return `allows at most ${plural(Number(params.limit), 'character')}; got ${String(data).length}`;
    case 'maxItems':
      return `allows at most ${plural(Number(params.limit), 'item')}; got ${(data as readonly unknown[]).length}`;
    case 'pattern': {
      const words = error.parentSchema?.['x-patternDescription'] as string | undefined;
      return `${words ?? `must match ${String(params.pattern)}`}; got ${describeValue(data)}`;
    }
    case 'format':
      return `must be an http or https URL; got ${describeValue(data)}`;
    default:
      return `${error.message ?? 'is invalid'}; got ${describeValue(data)}`;
  }
}

function isWebUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const { protocol } = new URL(value);
  return protocol === 'http:' || protocol === 'https:';
}

// YouTube quotes a tag that contains a space, so such a tag costs 2 more characters. Items that
// are not strings are the items' type error, not this one.
function totalLength(items: readonly unknown[]): number {
  return items.reduce<number>((sum, item) => (typeof item === 'string' ? sum + item.length + (item.includes(' ') ? 2 : 0) : sum), 0);
}
