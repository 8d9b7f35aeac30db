import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';
import { parse } from 'yaml';
import { SPEC_PATH } from '../../src/api/contract/specification.js';

/**
 * Checks every response a test receives against the spec: the status must be documented for the
 * operation, documented headers present, and the body valid against the documented schema. A
 * response to a path the spec does not have must still be the spec's Error shape.
 */

interface ResponseObject {
  $ref?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema?: unknown }>;
}
interface OperationObject {
  operationId?: string;
  responses: Record<string, ResponseObject>;
}
type Spec = { paths: Record<string, Record<string, OperationObject>> } & Record<string, unknown>;

const spec = parse(readFileSync(SPEC_PATH, 'utf8')) as Spec;
const ajv = new Ajv({ strict: false, allErrors: true, allowUnionTypes: true });
addFormats.default(ajv);
ajv.addSchema(spec, 'openapi');
const validators = new Map<string, ValidateFunction>();

const routes = Object.entries(spec.paths).map(([template, item]) => ({
  template,
  pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  item,
}));

export interface ObservedResponse {
  method: string;
  url: string;
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: unknown;
}

const exercised = new Set<string>();

/** The operationIds that responses have been checked for since the last reset (for coverage checks). */
export function operationsExercised(): ReadonlySet<string> {
  return exercised;
}

export function resetExercised(): void {
  exercised.clear();
}

export function expectMatchesSpec(res: ObservedResponse): void {
  const path = res.url.split('?')[0] ?? '';
  const route = routes.find((r) => r.pattern.test(path));
  const operation = route?.item[res.method.toLowerCase()];
  if (operation?.operationId) exercised.add(operation.operationId);
  const where = `${res.method} ${route?.template ?? path} ${res.status}`;
  if (!route || !operation) {
    expect(res.status, `${where}: only errors may come from outside the spec`).toBeGreaterThanOrEqual(400);
    check(`#/components/schemas/Error`, res.body, where);
    return;
  }
  const pointer = `#/paths/${escape(route.template)}/${res.method.toLowerCase()}/responses/${res.status}`;
  let response = operation.responses[String(res.status)];
  expect(response, `${where}: status not documented in the spec`).toBeDefined();
  let responsePointer = pointer;
  if (response?.$ref) {
    responsePointer = response.$ref;
    response = resolve(response.$ref) as ResponseObject;
  }
  for (const [header, value] of Object.entries(response?.headers ?? {})) {
    const declared = ((value as { $ref?: string }).$ref === undefined ? value : resolve((value as { $ref: string }).$ref)) as { required?: boolean };
    if (declared.required === true) expect(res.headers[header.toLowerCase()], `${where}: required header ${header} missing`).toBeDefined();
  }
  if (response?.content === undefined) {
    // A response the spec gives no content (a redirect) has none.
    expect(res.body, `${where}: a body the spec does not document`).toBeUndefined();
    return;
  }
  const type = String(res.headers['content-type']).split(';')[0]?.trim() ?? '';
  expect(Object.keys(response.content), `${where}: content type ${type} not documented`).toContain(type);
  if (type === 'application/json') check(`${responsePointer}/content/application~1json/schema`, res.body, where);
  else expect(typeof res.body, `${where}: ${type} body`).toBe('string');
}

function check(pointer: string, body: unknown, where: string): void {
  let validate = validators.get(pointer);
  if (!validate) {
    validate = ajv.compile({ $ref: `openapi${pointer}` });
    validators.set(pointer, validate);
  }
  const ok = validate(body);
  expect(ok, `${where}: body does not match the spec: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body)}`).toBe(true);
}

function escape(template: string): string {
  return template.replace(/~/g, '~0').replace(/\//g, '~1');
}

function resolve(ref: string): unknown {
  let node: unknown = spec;
  for (const raw of ref.replace(/^#\//, '').split('/')) {
    node = (node as Record<string, unknown>)[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}

/** Checks an event body Herald sent against the spec's `webhooks` entry for its type. */
export function expectEventMatchesSpec(body: unknown): void {
  const type = (body as { type?: unknown } | null)?.type;
  expect(typeof type, 'an event carries its type').toBe('string');
  const webhooks = spec.webhooks as Record<string, unknown> | undefined;
  expect(webhooks?.[type as string], `event type ${String(type)} is documented under webhooks`).toBeDefined();
  check(`#/webhooks/${escape(type as string)}/post/requestBody/content/application~1json/schema`, body, `webhook ${String(type)}`);
}
