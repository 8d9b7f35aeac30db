import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

/** OpenAPI annotations that are not JSON Schema keywords; strict Ajv would refuse the schema otherwise. */
const OPENAPI_KEYWORDS = ['example', 'xml', 'externalDocs', 'discriminator'];

function createAjv(coerceTypes: Options['coerceTypes'], useDefaults = true): Ajv {
  const ajv = new Ajv({
    coerceTypes,
    // Unknown fields are refused, never silently dropped (a typo must not change what is saved).
    removeAdditional: false,
    allErrors: true,
    verbose: true,
    useDefaults,
    strict: true,
    allowUnionTypes: true,
  });
  addFormats.default(ajv);
  ajv.addVocabulary(OPENAPI_KEYWORDS);
  return ajv;
}

/**
 * Bodies are JSON and must arrive with the right types; query strings and path parameters are text,
 * so only they are coerced (`limit=5` is the integer 5).
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const bodyAjv = createAjv(false, false);
  const defaultsAjv = createAjv(false);
  const textAjv = createAjv('array');
  return ({ schema, httpPart, method }) =>
    onFirstUse(() => {
      if (httpPart !== 'body') return plainNumbersOnly(textAjv.compile(schema as object));
      // In a PATCH a field left out keeps its value: a default would overwrite it.
      if (method === 'PATCH') return bodyAjv.compile(schema as object);
      return checkedThenDefaulted(bodyAjv.compile(schema as object), defaultsAjv.compile(schema as object));
    });
}

/**
 * The body as the client sent it is checked, and only then are defaults filled in: filled first,
 * a default would meet a constraint the client did not (`{}` against `minProperties: 1`).
 */
function checkedThenDefaulted(check: ValidateFunction, fill: ValidateFunction): ValidateFunction {
  const validate = ((data: unknown) => {
    const valid = check(data);
    validate.errors = check.errors;
    if (valid) fill(data);
    return valid;
  }) as ValidateFunction;
  validate.schema = check.schema;
  return validate;
}

/**
 * A validator compiled when it first validates rather than when its route is built: compiling
 * every schema of the spec was a fifth of a warm start, for routes a process may never serve.
 * The spec's schemas are fixed at build time, and every route's are compiled by the tests.
 */
function onFirstUse(compile: () => ValidateFunction): ValidateFunction {
  let compiled: ValidateFunction | undefined;
  const validate = ((data: unknown) => {
    compiled ??= compile();
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  }) as ValidateFunction;
  return validate;
}

/** A number as a query string or path may spell it: decimal digits, a sign, a decimal point. */
const PLAIN_NUMBER: Record<string, RegExp> = { integer: /^-?[0-9]+$/, number: /^-?[0-9]+(\.[0-9]+)?$/ };

/**
 * Ajv coerces text with Number(), so `1e1`, `0x10`, ` 10` and `1e999` (Infinity, within any bound)
 * would all pass as integers: a numeric parameter must be written in plain decimal, checked on
 * the text before Ajv coerces it, and is refused as the wrong type otherwise.
 */
function plainNumbersOnly(validate: ValidateFunction): ValidateFunction {
  const properties = (validate.schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const checked = ((data: unknown) => {
    const field = Object.entries((data ?? {}) as Record<string, unknown>).find(([name, value]) => {
      const pattern = PLAIN_NUMBER[String(properties[name]?.type)];
      return pattern !== undefined && typeof value === 'string' && !pattern.test(value);
    });
    if (field === undefined) {
      const valid = validate(data);
      checked.errors = validate.errors;
      return valid;
    }
    const type = String(properties[field[0]]?.type);
    const error: ErrorObject = {
      keyword: 'type',
      instancePath: `/${field[0]}`,
      schemaPath: `#/properties/${field[0]}/type`,
      params: { type },
      message: `must be ${type === 'integer' ? 'an integer' : 'a number'} in plain decimal digits`,
      data: field[1],
    };
    checked.errors = [error];
    return false;
  }) as ValidateFunction;
  checked.schema = validate.schema;
  return checked;
}
