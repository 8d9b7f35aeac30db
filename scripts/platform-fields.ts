import { join } from 'node:path';
import type { components } from '../generated/openapi.js';
import { REPO_ROOT, isObject, type JsonObject } from './spec-document.js';

/**
 * What accountOverrides[].fields accepts per platform has one source: the spec's per-platform
 * schemas (`XFields` … `RedditFields`). From them this derives generated/platform-fields.ts: the
 * schemas as written (the domain validates `fields` with Ajv against them) and the same rules as
 * `GET /api/v1/platforms` serves them (`PlatformField` objects). A keyword that `PlatformField`
 * cannot express is refused here, so the two views can never say different things.
 */

type PlatformField = components['schemas']['PlatformField'];
type FieldType = components['schemas']['PlatformFieldType'];

export const PLATFORM_FIELDS_MODULE_PATH = join(REPO_ROOT, 'generated/platform-fields.ts');

const SCHEMA_NAME = /^([A-Z][a-z]*)Fields$/;
/** The generic schema the request body uses; the other `…Fields` schemas are one per platform. */
const GENERIC_SCHEMA = 'PlatformFields';

const OBJECT_KEYWORDS = ['type', 'description', 'additionalProperties', 'required', 'properties'];
const FIELD_KEYWORDS: Record<FieldType, readonly string[]> = {
  string: ['enum', 'minLength', 'maxLength', 'pattern', 'x-patternDescription', 'format', 'x-excludesMedia'],
  boolean: [],
  integer: ['minimum', 'maximum'],
  array: ['items', 'maxItems', 'x-maxTotalLength'],
};
const ITEM_KEYWORDS = ['type', 'minLength', 'maxLength'];
const FIELD_TYPES = Object.keys(FIELD_KEYWORDS);

export interface PlatformFieldsSchema {
  /** Platform id: the schema name without `Fields`, lower-cased (`YoutubeFields` is youtube). */
  id: string;
  name: string;
  schema: JsonObject;
  fields: PlatformField[];
}

/** Every per-platform fields schema of the document, in document order, with its served form. */
export function readPlatformFieldsSchemas(doc: JsonObject): PlatformFieldsSchema[] {
  const components = isObject(doc.components) ? doc.components : {};
  const schemas = isObject(components.schemas) ? components.schemas : {};
  const out: PlatformFieldsSchema[] = [];
  for (const [name, schema] of Object.entries(schemas)) {
    const match = SCHEMA_NAME.exec(name);
    if (match === null || name === GENERIC_SCHEMA || !isObject(schema)) continue;
    out.push({ id: (match[1] ?? '').toLowerCase(), name, schema, fields: toPlatformFields(name, schema) });
  }
  if (out.length === 0) throw new Error('the spec has no per-platform fields schemas (XFields … RedditFields)');
  return out;
}

function toPlatformFields(name: string, schema: JsonObject): PlatformField[] {
  const where = `components.schemas.${name}`;
  refuseOtherKeywords(where, schema, OBJECT_KEYWORDS);
  if (schema.type !== 'object' || schema.additionalProperties !== false || !isObject(schema.properties)) {
    throw new Error(`${where}: must be type object with additionalProperties false and properties`);
  }
  const properties = schema.properties;
  const required = schema.required ?? [];
  if (!Array.isArray(required) || !required.every((key) => typeof key === 'string' && Object.hasOwn(properties, key))) {
    throw new Error(`${where}.required: must list keys of properties`);
  }
  return Object.entries(properties).map(([key, property]) => toPlatformField(`${where}.properties.${key}`, key, property, required.includes(key)));
}

function toPlatformField(where: string, key: string, property: unknown, required: boolean): PlatformField {
  // Keys are plain camelCase names: they appear unescaped in Ajv's instance paths and in messages.
  if (!/^[a-z][A-Za-z0-9]*$/.test(key)) throw new Error(`${where}: a field name must be camelCase`);
  if (!isObject(property)) throw new Error(`${where}: must be a schema object`);
  const type = property.type;
  if (typeof type !== 'string' || !FIELD_TYPES.includes(type)) {
    throw new Error(`${where}.type: must be one of ${FIELD_TYPES.join(', ')}`);
  }
  const fieldType = type as FieldType;
  refuseOtherKeywords(where, property, ['type', 'description', ...FIELD_KEYWORDS[fieldType]]);
  if (typeof property.description !== 'string' || property.description === '') {
    throw new Error(`${where}.description: every field needs one (it is served as the field's description)`);
  }
  if (property.format !== undefined && property.format !== 'uri') throw new Error(`${where}.format: only uri is supported`);
  let items: PlatformField['items'] = null;
  if (fieldType === 'array') {
    const itemSchema = property.items;
    if (!isObject(itemSchema) || itemSchema.type !== 'string') throw new Error(`${where}.items: must be type string`);
    refuseOtherKeywords(`${where}.items`, itemSchema, ITEM_KEYWORDS);
    items = { type: 'string', minLength: orNull(itemSchema.minLength), maxLength: orNull(itemSchema.maxLength) };
  }
  return {
    key,
    description: property.description,
    type: fieldType,
    required,
    enum: orNull(property.enum),
    minLength: orNull(property.minLength),
    maxLength: orNull(property.maxLength),
    pattern: orNull(property.pattern),
    patternDescription: orNull(property['x-patternDescription']),
    format: orNull(property.format),
    minimum: orNull(property.minimum),
    maximum: orNull(property.maximum),
    items,
    maxItems: orNull(property.maxItems),
    maxTotalLength: orNull(property['x-maxTotalLength']),
    excludesMedia: property['x-excludesMedia'] === true,
  };
}

function refuseOtherKeywords(where: string, schema: JsonObject, allowed: readonly string[]): void {
  const other = Object.keys(schema).filter((keyword) => !allowed.includes(keyword));
  if (other.length > 0) {
    throw new Error(`${where}: ${other.join(', ')} cannot be served as a PlatformField (allowed here: ${allowed.join(', ')})`);
  }
}

// The values' own types are checked where they land: the generated module is typed by the spec's
// PlatformField schema (typecheck), and Ajv validates the schemas themselves when compiling them.
function orNull<T>(value: unknown): T | null {
  return value === undefined ? null : (value as T);
}

/** The text of generated/platform-fields.ts for this document. */
export function renderPlatformFieldsModule(doc: JsonObject): string {
  const platforms = readPlatformFieldsSchemas(doc);
  const ids = platforms.map((platform) => `'${platform.id}'`).join(' | ');
  const byId = <T>(pick: (platform: PlatformFieldsSchema) => T): string =>
    JSON.stringify(Object.fromEntries(platforms.map((platform) => [platform.id, pick(platform)])), null, 2);
  return [
    `// Generated by scripts/generate-platform-fields.ts from openapi/openapi.yaml (${platforms.map((p) => p.name).join(', ')}).`,
    '// Do not edit: change the spec, then run `npm run generate`.',
    '',
    "import type { components } from './openapi.js';",
    '',
    `export type FieldsPlatformId = ${ids};`,
    '',
    "/** Each platform's fields schema as written in the spec; `fields` are validated against it. */",
    `export const platformFieldSchemas: Readonly<Record<FieldsPlatformId, object>> = ${byId((p) => p.schema)};`,
    '',
    '/** The same rules as GET /api/v1/platforms serves them. */',
    `export const platformFields: Readonly<Record<FieldsPlatformId, components['schemas']['PlatformField'][]>> = ${byId((p) => p.fields)};`,
    '',
  ].join('\n');
}
