import { STORABLE_TEXT_PATTERN } from '../src/domain/text.js';
import { isObject, listOperations, resolve, type JsonObject, type OperationEntry } from './spec-document.js';

/**
 * Compares a released OpenAPI document with the current one and lists the changes that break
 * existing /api/v1 clients, by the rules of docs/COMPATIBILITY.md:
 *
 * Breaking                                              | Not breaking
 * ------------------------------------------------------|-------------------------------------------
 * an operation removed (a path or method gone)          | a new operation
 * an operationId renamed                                | a new optional request field or parameter
 * a request field or parameter removed                  | a new response field
 * a new required request field, parameter or body       | wider request limits (longer, more items…)
 * narrower accepted values: a type, enum value, format, | a new request enum value
 *   pattern or tighter limit (min/max/length/items)     | a new response status (e.g. a new error)
 * a response field removed, or no longer always present | a new value of a response enum, or of a
 * a response type changed or widened (e.g. now null)    |   plain-string code such as `details[].code`
 * a response enum value removed                         |   (clients treat unknown values like the
 * a response status, media type or header removed      |   spec's `custom`); listed as a notice
 *                                                       | the storable-text pattern (no NUL, no
 *                                                       |   unpaired surrogate) on a request string
 * authentication newly required                         | descriptions, examples, summaries
 *
 * Request data (parameters, bodies) may only accept more; response data may only promise the same
 * or less variety and must keep every field. `$ref`s are followed in each document separately.
 */

export interface CompatibilityReport {
  /** One line per breaking change: `where: what`. Empty when the current document is compatible. */
  breaking: string[];
  /** Operations only in the current document (`METHOD /path (operationId)`), for the changelog. */
  added: string[];
  /** Compatible changes clients should hear about (new response enum values), for the changelog. */
  notices: string[];
}

type Direction = 'request' | 'response';

interface Context {
  before: JsonObject;
  after: JsonObject;
  out: string[];
  notices: string[];
}

export function compareSpecs(before: JsonObject, after: JsonObject): CompatibilityReport {
  const ctx: Context = { before, after, out: [], notices: [] };
  const key = (op: OperationEntry) => `${op.method} ${op.path.replace(/\{[^}]*\}/g, '{}')}`;
  const afterOps = new Map(listOperations(after).map((op) => [key(op), op]));
  const beforeKeys = new Set<string>();

  for (const old of listOperations(before)) {
    beforeKeys.add(key(old));
    const where = `${old.method.toUpperCase()} ${old.path}${old.operationId ? ` (${old.operationId})` : ''}`;
    const now = afterOps.get(key(old));
    if (!now) {
      ctx.out.push(`${where}: operation removed`);
      continue;
    }
    if (old.operationId !== undefined && now.operationId !== old.operationId) {
      ctx.out.push(`${where}: operationId renamed to ${now.operationId ?? '(none)'}; generated clients name their methods after it`);
    }
    compareSecurity(ctx, old, now, where);
    compareParameters(ctx, old, now, where);
    compareRequestBody(ctx, old.operation.requestBody, now.operation.requestBody, where);
    compareResponses(ctx, old.operation.responses, now.operation.responses, where);
  }

  const added = listOperations(after)
    .filter((op) => !beforeKeys.has(key(op)))
    .map((op) => `${op.method.toUpperCase()} ${op.path}${op.operationId ? ` (${op.operationId})` : ''}`);
  return { breaking: [...new Set(ctx.out)], added, notices: [...new Set(ctx.notices)] };
}

// --- operations ----------------------------------------------------------------------------

function effectiveSecurity(doc: JsonObject, op: OperationEntry): unknown[] {
  const own = op.operation.security;
  if (Array.isArray(own)) return own;
  return Array.isArray(doc.security) ? doc.security : [];
}

/** No requirement, or an empty one (`{}`), means a request without credentials is allowed. */
function allowsAnonymous(requirements: unknown[]): boolean {
  return requirements.length === 0 || requirements.some((r) => isObject(r) && Object.keys(r).length === 0);
}

function compareSecurity(ctx: Context, old: OperationEntry, now: OperationEntry, where: string): void {
  if (allowsAnonymous(effectiveSecurity(ctx.before, old)) && !allowsAnonymous(effectiveSecurity(ctx.after, now))) {
    ctx.out.push(`${where}: now requires authentication`);
  }
}

interface Parameter {
  name: string;
  in: string;
  required: boolean;
  schema: unknown;
}

/** Parameters by `in` and name; path parameters by position, since renaming `{id}` changes no URL. */
function parameters(doc: JsonObject, op: OperationEntry): Map<string, Parameter> {
  const placeholders = [...op.path.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]);
  const out = new Map<string, Parameter>();
  for (const raw of [...op.pathParameters, ...(Array.isArray(op.operation.parameters) ? (op.operation.parameters as unknown[]) : [])]) {
    const p = resolve(doc, raw);
    if (!isObject(p) || typeof p.name !== 'string' || typeof p.in !== 'string') continue;
    const id = p.in === 'path' ? `path #${placeholders.indexOf(p.name)}` : `${p.in} ${p.in === 'header' ? p.name.toLowerCase() : p.name}`;
    out.set(id, { name: p.name, in: p.in, required: p.required === true || p.in === 'path', schema: p.schema });
  }
  return out;
}

function compareParameters(ctx: Context, old: OperationEntry, now: OperationEntry, where: string): void {
  const before = parameters(ctx.before, old);
  const after = parameters(ctx.after, now);
  for (const [id, p] of before) {
    const q = after.get(id);
    const at = `${where} ${p.in} parameter ${p.name}`;
    if (!q) {
      if (p.in !== 'path') ctx.out.push(`${at}: removed`);
      continue;
    }
    if (q.required && !p.required) ctx.out.push(`${at}: now required`);
    compareSchema(ctx, p.schema, q.schema, 'request', at, '', []);
  }
  for (const [id, q] of after) {
    if (!before.has(id) && q.required) ctx.out.push(`${where} ${q.in} parameter ${q.name}: new required parameter`);
  }
}

function compareRequestBody(ctx: Context, oldRaw: unknown, newRaw: unknown, where: string): void {
  const old = resolve(ctx.before, oldRaw);
  const now = resolve(ctx.after, newRaw);
  const at = `${where} request body`;
  if (isObject(now) && now.required === true && !(isObject(old) && old.required === true)) ctx.out.push(`${at}: now required`);
  if (!isObject(old) || !isObject(old.content)) return;
  const content = isObject(now) && isObject(now.content) ? now.content : {};
  for (const [mediaType, media] of Object.entries(old.content)) {
    const next = content[mediaType];
    if (!isObject(next)) {
      ctx.out.push(`${at}: ${mediaType} no longer accepted`);
      continue;
    }
    if (isObject(media)) compareSchema(ctx, media.schema, next.schema, 'request', `${at} (${mediaType})`, '', []);
  }
}

function compareResponses(ctx: Context, oldRaw: unknown, newRaw: unknown, where: string): void {
  const old = isObject(oldRaw) ? oldRaw : {};
  const now = isObject(newRaw) ? newRaw : {};
  for (const [status, rawResponse] of Object.entries(old)) {
    const at = `${where} response ${status}`;
    if (!(status in now)) {
      ctx.out.push(`${at}: status removed`);
      continue;
    }
    const before = resolve(ctx.before, rawResponse);
    const after = resolve(ctx.after, now[status]);
    if (!isObject(before) || !isObject(after)) continue;
    const headersAfter = isObject(after.headers) ? after.headers : {};
    for (const header of Object.keys(isObject(before.headers) ? before.headers : {})) {
      const present = Object.keys(headersAfter).some((h) => h.toLowerCase() === header.toLowerCase());
      if (!present) ctx.out.push(`${at}: header ${header} no longer sent`);
    }
    const contentAfter = isObject(after.content) ? after.content : {};
    for (const [mediaType, media] of Object.entries(isObject(before.content) ? before.content : {})) {
      const next = contentAfter[mediaType];
      if (!isObject(next)) {
        ctx.out.push(`${at}: ${mediaType} no longer returned`);
        continue;
      }
      if (isObject(media)) compareSchema(ctx, media.schema, next.schema, 'response', `${at} (${mediaType})`, '', []);
    }
  }
}

// --- schemas -------------------------------------------------------------------------------

const UPPER_BOUNDS = ['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties'] as const;
const LOWER_BOUNDS = ['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties'] as const;

/** The JSON types a schema allows; undefined when it does not restrict the type. */
function types(schema: JsonObject): Set<string> | undefined {
  let list: unknown[] | undefined;
  if (typeof schema.type === 'string') list = [schema.type];
  else if (Array.isArray(schema.type)) list = schema.type;
  if (list === undefined) return undefined;
  const set = new Set(list.filter((t): t is string => typeof t === 'string'));
  if (schema.nullable === true) set.add('null'); // OpenAPI 3.0 style
  return set;
}

function allows(set: Set<string> | undefined, type: string): boolean {
  return set === undefined || set.has(type) || (type === 'integer' && set.has('number'));
}

/** Allowed values, from `enum` or `const`; undefined when any value of the type is allowed. */
function values(schema: JsonObject): unknown[] | undefined {
  if (Array.isArray(schema.enum)) return schema.enum as unknown[];
  if ('const' in schema) return [schema.const];
  return undefined;
}

const show = (v: unknown) => JSON.stringify(v);
const list = (set: Set<string> | undefined) => (set ? [...set].join(' | ') : 'any');

/** `true`, a missing schema and `{}` all allow anything. */
function asSchema(doc: JsonObject, raw: unknown): JsonObject | undefined {
  const node = resolve(doc, raw);
  if (node === undefined || node === true) return {};
  return isObject(node) ? node : undefined;
}

/**
 * Compares two schemas found at the same place. `where` names the place (operation, body,
 * parameter), `path` the field inside it (`data[].status`); both go into the messages.
 */
function compareSchema(ctx: Context, oldRaw: unknown, newRaw: unknown, dir: Direction, where: string, path: string, stack: string[]): void {
  // A recursive schema compared against itself again adds nothing new.
  const pair = `${refOf(oldRaw)}|${refOf(newRaw)}`;
  if (pair !== '|' && stack.includes(pair)) return;
  const trail = pair === '|' ? stack : [...stack, pair];

  const old = asSchema(ctx.before, oldRaw);
  const now = asSchema(ctx.after, newRaw);
  if (old === undefined || now === undefined) return;
  const at = (msg: string) => ctx.out.push(`${where}${path ? ` ${path}` : ''}: ${msg}`);

  // Types.
  const oldTypes = types(old);
  const newTypes = types(now);
  if (dir === 'request') {
    if (oldTypes === undefined && newTypes !== undefined) at(`type narrowed from any to ${list(newTypes)}`);
    for (const t of oldTypes ?? []) if (!allows(newTypes, t)) at(`type ${list(oldTypes)} changed to ${list(newTypes)}; ${t} no longer accepted`);
  } else {
    if (oldTypes !== undefined && newTypes === undefined) at(`type ${list(oldTypes)} changed to any`);
    for (const t of newTypes ?? []) if (!allows(oldTypes, t)) at(`type ${list(oldTypes)} changed to ${list(newTypes)}; may now be ${t}`);
  }

  // Enumerations (and const).
  const oldValues = values(old);
  const newValues = values(now);
  const has = (vals: unknown[], v: unknown) => vals.some((w) => show(w) === show(v));
  if (dir === 'request') {
    if (newValues !== undefined) {
      if (oldValues === undefined) at(`now restricted to ${newValues.map(show).join(', ')}`);
      else for (const v of oldValues) if (!has(newValues, v)) at(`value ${show(v)} no longer accepted`);
    }
  } else if (oldValues !== undefined) {
    if (newValues === undefined) at(`no longer limited to ${oldValues.map(show).join(', ')}`);
    else {
      for (const v of oldValues) if (!has(newValues, v)) at(`value ${show(v)} removed`);
      for (const v of newValues) if (!has(oldValues, v)) ctx.notices.push(`${where}${path ? ` ${path}` : ''}: new value ${show(v)}`);
    }
  }

  // Formats, patterns and limits.
  if (dir === 'request') {
    if (now.format !== undefined && now.format !== old.format) at(`format ${show(old.format ?? 'none')} changed to ${show(now.format)}`);
    // The storable-text pattern refuses only text that never worked: NUL failed with a 500, and an
    // unpaired surrogate was stored as U+FFFD rather than as sent. Stating it is a fix, not a narrowing.
    const storableTextAdded = old.pattern === undefined && now.pattern === STORABLE_TEXT_PATTERN;
    if (now.pattern !== undefined && now.pattern !== old.pattern && !storableTextAdded)
      at(`pattern ${show(old.pattern ?? 'none')} changed to ${show(now.pattern)}`);
    if (now.multipleOf !== undefined && now.multipleOf !== old.multipleOf) at(`multipleOf changed to ${show(now.multipleOf)}`);
    if (now.uniqueItems === true && old.uniqueItems !== true) at('items must now be unique');
    for (const k of UPPER_BOUNDS) {
      const [a, b] = [old[k], now[k]];
      if (typeof b === 'number' && (typeof a !== 'number' || b < a)) at(`${k} lowered from ${show(a ?? 'none')} to ${b}`);
    }
    for (const k of LOWER_BOUNDS) {
      const [a, b] = [old[k], now[k]];
      if (typeof b === 'number' && (typeof a !== 'number' || b > a)) at(`${k} raised from ${show(a ?? 'none')} to ${b}`);
    }
  } else if (old.format !== undefined && now.format !== old.format) {
    at(`format ${show(old.format)} changed to ${show(now.format ?? 'none')}`);
  }

  compareObject(ctx, old, now, dir, where, path, trail);

  // Arrays.
  if (old.items !== undefined || now.items !== undefined) compareSchema(ctx, old.items, now.items, dir, where, `${path}[]`, trail);

  // Compositions, member by member.
  for (const k of ['oneOf', 'anyOf', 'allOf'] as const) {
    const a = Array.isArray(old[k]) ? old[k] : [];
    const b = Array.isArray(now[k]) ? now[k] : [];
    if (a.length === 0 && b.length === 0) continue;
    for (let i = 0; i < Math.min(a.length, b.length); i++) compareSchema(ctx, a[i], b[i], dir, where, `${path}(${k}[${i}])`, trail);
    const fewer = b.length < a.length;
    const more = b.length > a.length;
    if (k === 'allOf' ? (dir === 'request' ? more : fewer) : dir === 'request' ? fewer : more) {
      at(`${k} changed from ${a.length} to ${b.length} members`);
    }
  }
}

function compareObject(ctx: Context, old: JsonObject, now: JsonObject, dir: Direction, where: string, path: string, trail: string[]): void {
  const oldProps = isObject(old.properties) ? old.properties : {};
  const newProps = isObject(now.properties) ? now.properties : {};
  const oldRequired = new Set(Array.isArray(old.required) ? old.required : []);
  const newRequired = new Set(Array.isArray(now.required) ? now.required : []);
  // Field messages name the field by its full path: `…: field data[].userId removed`.
  const at = (msg: string) => ctx.out.push(`${where}: ${msg}`);
  const field = (name: string) => `field ${path ? `${path}.` : ''}${name}`;

  for (const name of Object.keys(oldProps)) {
    if (!(name in newProps)) at(`${field(name)} removed`);
  }
  if (dir === 'request') {
    for (const name of newRequired) {
      if (typeof name !== 'string' || oldRequired.has(name)) continue;
      at(name in oldProps ? `${field(name)} is now required` : `new required ${field(name)}`);
    }
    if (now.additionalProperties === false && old.additionalProperties !== false) {
      at('unknown fields are now refused');
    }
  } else {
    for (const name of oldRequired) {
      if (typeof name === 'string' && name in newProps && !newRequired.has(name)) at(`${field(name)} may now be missing`);
    }
  }
  for (const [name, schema] of Object.entries(oldProps)) {
    if (name in newProps) compareSchema(ctx, schema, newProps[name], dir, where, path ? `${path}.${name}` : name, trail);
  }
  const oldExtra = old.additionalProperties;
  const newExtra = now.additionalProperties;
  if (isObject(oldExtra) || isObject(newExtra)) {
    if (!(dir === 'request' && newExtra === false) && !(dir === 'response' && oldExtra === false)) {
      compareSchema(ctx, oldExtra, newExtra, dir, where, `${path}.*`, trail);
    }
  }
}

function refOf(raw: unknown): string {
  return isObject(raw) && typeof raw.$ref === 'string' ? raw.$ref : '';
}
