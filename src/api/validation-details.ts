import type { ErrorObject } from 'ajv';
import type { ErrorDetail } from '../domain/api-types.js';
import { STORABLE_TEXT_PATTERN, unstorableTextDetail } from '../domain/text.js';

/** Longer received values are cut, so a huge field is never echoed back whole. */
const MAX_RECEIVED = 100;

/**
 * The most `details` items one answer carries: a body of 1 MiB can hold tens of thousands of
 * problems, and answering each would send megabytes for a few hundred kilobytes.
 */
export const MAX_DETAILS = 20;

export interface CappedDetails {
  details: ErrorDetail[];
  /** How many problems were found beyond the first MAX_DETAILS; absent when none were. */
  detailsOmitted?: number;
}

/**
 * Maps Ajv's errors to the interface's `details` items (Zod-like codes), each locating its field
 * from the root of the validated part, array positions as integers; only the first MAX_DETAILS
 * are mapped, the rest counted.
 */
export function toErrorDetails(errors: readonly ErrorObject[], root: unknown): CappedDetails {
  const details: ErrorDetail[] = [];
  let omitted = 0;
  for (const e of errors) {
    if (isWrapperError(e)) continue;
    if (details.length < MAX_DETAILS) details.push(toDetail(e, root));
    else omitted += 1;
  }
  return omitted === 0 ? { details } : { details, detailsOmitted: omitted };
}

/** The same cap for details the product's own rules found. */
export function capDetails(all: ErrorDetail[]): CappedDetails {
  return all.length <= MAX_DETAILS ? { details: all } : { details: all.slice(0, MAX_DETAILS), detailsOmitted: all.length - MAX_DETAILS };
}

/** `if`/`anyOf` failures only repeat the errors of their branches, `propertyNames` those of its key. */
function isWrapperError(e: ErrorObject): boolean {
  return e.keyword === 'if' || e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'propertyNames';
}

function toDetail(e: ErrorObject, root: unknown): ErrorDetail {
  const params = e.params as Record<string, unknown>;
  // A failing key (propertyNames) is reported at the key itself, with the key as the value.
  const key = e.propertyName;
  const path = key === undefined ? toPath(e.instancePath, root) : [...toPath(e.instancePath, root), key];
  // Fastify hands a missing body to Ajv as null; the root of the request part tells them apart.
  const value: unknown = key !== undefined ? key : e.instancePath === '' ? root : e.data;
  switch (e.keyword) {
    case 'required': {
      const missing = String(params.missingProperty);
      const expected = expectedTypeOf(e.parentSchema, missing);
      return { code: 'invalid_type', expected, received: 'undefined', path: [...path, missing], message: 'Required' };
    }
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      return { code: 'unrecognized_keys', expected: 'never', received: key, path: [...path, key], message: `Unrecognized key: '${key}'` };
    }
    case 'type': {
      const expected = Array.isArray(params.type) ? params.type.join(' | ') : String(params.type);
      const received = typeName(value);
      return { code: 'invalid_type', expected, received, path, message: `Expected ${expected}, received ${received}` };
    }
    case 'minimum':
    case 'exclusiveMinimum':
    case 'minLength':
    case 'minItems':
    case 'minProperties':
      return { code: 'too_small', expected: bound(e.keyword, params), received: sizeOf(e.keyword, value), path, message: message(e) };
    case 'maximum':
    case 'exclusiveMaximum':
    case 'maxLength':
    case 'maxItems':
    case 'maxProperties':
      return { code: 'too_big', expected: bound(e.keyword, params), received: sizeOf(e.keyword, value), path, message: message(e) };
    case 'enum': {
      const allowed = Array.isArray(params.allowedValues) ? params.allowedValues.map(String).join(' | ') : '';
      return { code: 'invalid_enum_value', expected: allowed, received: show(value), path, message: `Expected ${allowed}, received '${show(value)}'` };
    }
    case 'const':
      return { code: 'invalid_enum_value', expected: show(params.allowedValue), received: show(value), path, message: message(e) };
    case 'format':
      return { code: 'invalid_string', expected: String(params.format), received: show(value), path, message: message(e) };
    case 'pattern':
      if (params.pattern === STORABLE_TEXT_PATTERN && typeof value === 'string') return unstorableTextDetail(value, path);
      return { code: 'invalid_string', expected: `match ${String(params.pattern)}`, received: show(value), path, message: message(e) };
    case 'uniqueItems': {
      // Ajv reports items i and j as equal; j is the later one, the duplicate.
      const j = Number(params.i) > Number(params.j) ? Number(params.i) : Number(params.j);
      const item: unknown = Array.isArray(value) ? value[j] : undefined;
      return { code: 'not_unique', expected: 'unique items', received: show(item), path: [...path, j], message: `Duplicate item at position ${j}` };
    }
    default:
      return { code: 'custom', expected: e.keyword, received: show(value), path, message: message(e) };
  }
}

/** JSON pointer segments to path items, numbers where the segment indexes an array. */
function toPath(instancePath: string, root: unknown): (string | number)[] {
  if (instancePath === '') return [];
  const path: (string | number)[] = [];
  let node: unknown = root;
  for (const raw of instancePath.slice(1).split('/')) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      const index = Number(segment);
      path.push(index);
      node = node[index];
    } else {
      path.push(segment);
      node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[segment] : undefined;
    }
  }
  return path;
}

function expectedTypeOf(parentSchema: unknown, property: string): string {
  const properties = (parentSchema as { properties?: Record<string, { type?: unknown; enum?: unknown[] }> } | undefined)?.properties;
  const schema = properties?.[property];
  if (Array.isArray(schema?.type)) return schema.type.join(' | ');
  if (typeof schema?.type === 'string') return schema.type;
  if (Array.isArray(schema?.enum)) return schema.enum.map(String).join(' | ');
  return 'value';
}

/** `>=1`, `<=100`, `>0`: numeric keywords name their comparison, size keywords imply it. */
function bound(keyword: string, params: Record<string, unknown>): string {
  const comparison = typeof params.comparison === 'string' ? params.comparison : keyword.startsWith('min') ? '>=' : '<=';
  return `${comparison}${String(params.limit)}`;
}

function sizeOf(keyword: string, value: unknown): string {
  if (keyword.endsWith('Length') && typeof value === 'string') return String([...value].length);
  if (keyword.endsWith('Items') && Array.isArray(value)) return String(value.length);
  if (keyword.endsWith('Properties') && typeof value === 'object' && value !== null) return String(Object.keys(value).length);
  return show(value);
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function show(value: unknown): string {
  const text = typeof value === 'string' ? value : value === undefined ? 'undefined' : JSON.stringify(value);
  return text.length > MAX_RECEIVED ? `${text.slice(0, MAX_RECEIVED)}…` : text;
}

function message(e: ErrorObject): string {
  return e.message ?? `must pass "${e.keyword}"`;
}
