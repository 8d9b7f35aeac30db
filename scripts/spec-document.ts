import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { SPEC_PATH } from '../src/api/contract/specification.js';

/**
 * Small helpers over a parsed OpenAPI document, shared by the docs check, the consumer checks and
 * the breaking-change check. Only local `$ref`s (`#/…`) exist in this project's spec.
 */

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const RELEASED_SPEC_PATH = fileURLToPath(new URL('../openapi/released/v1.yaml', import.meta.url));
/** Flagged changes from the released spec that were reviewed as compatible, each with its reason. */
export const ACCEPTED_CHANGES_PATH = fileURLToPath(new URL('../openapi/released/v1-accepted-changes.yaml', import.meta.url));

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export type JsonObject = Record<string, unknown>;

export interface OperationEntry {
  method: (typeof HTTP_METHODS)[number];
  path: string;
  operationId: string | undefined;
  summary: string | undefined;
  tags: string[];
  operation: JsonObject;
  /** The path item's own parameters, which apply to every operation under it. */
  pathParameters: unknown[];
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function loadSpec(path: string = SPEC_PATH): JsonObject {
  const doc: unknown = parse(readFileSync(path, 'utf8'));
  if (!isObject(doc)) throw new Error(`${path} is not an OpenAPI document`);
  return doc;
}

export interface AcceptedChange {
  change: string;
  reason: string;
}

export function loadAcceptedChanges(path: string = ACCEPTED_CHANGES_PATH): AcceptedChange[] {
  const list: unknown = parse(readFileSync(path, 'utf8')) ?? [];
  const valid = Array.isArray(list) && list.every((e) => isObject(e) && typeof e.change === 'string' && typeof e.reason === 'string');
  if (!valid) throw new Error(`${path} must be a list of { change, reason } strings`);
  return list as AcceptedChange[];
}

/** Every operation of the document, in document order. */
export function listOperations(doc: JsonObject): OperationEntry[] {
  const out: OperationEntry[] = [];
  const paths = isObject(doc.paths) ? doc.paths : {};
  for (const [path, rawItem] of Object.entries(paths)) {
    const item = resolve(doc, rawItem);
    if (!isObject(item)) continue;
    const pathParameters = Array.isArray(item.parameters) ? item.parameters : [];
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      out.push({
        method,
        path,
        operationId: typeof operation.operationId === 'string' ? operation.operationId : undefined,
        summary: typeof operation.summary === 'string' ? operation.summary : undefined,
        tags: Array.isArray(operation.tags) ? operation.tags.filter((t): t is string => typeof t === 'string') : [],
        operation,
        pathParameters,
      });
    }
  }
  return out;
}

/** The value a local JSON pointer (`#/components/schemas/Post`) names, or undefined. */
export function lookupPointer(doc: JsonObject, ref: string): unknown {
  if (!ref.startsWith('#')) throw new Error(`only local $refs are supported, got ${ref}`);
  let node: unknown = doc;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) node = node[Number(key)];
    else if (isObject(node)) node = node[key];
    else return undefined;
  }
  return node;
}

/** Follows `$ref` until it reaches a node without one (a chain of at most 32 hops). */
export function resolve(doc: JsonObject, node: unknown): unknown {
  let current = node;
  for (let hops = 0; isObject(current) && typeof current.$ref === 'string'; hops++) {
    if (hops > 32) throw new Error(`$ref chain too long at ${current.$ref}`);
    const target = lookupPointer(doc, current.$ref);
    if (target === undefined) throw new Error(`unresolved $ref ${current.$ref}`);
    current = target;
  }
  return current;
}
