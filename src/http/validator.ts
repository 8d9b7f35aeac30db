import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

/** OpenAPI annotations that are not JSON Schema keywords; strict Ajv would refuse the schema otherwise. */
const OPENAPI_KEYWORDS = ['example', 'xml', 'externalDocs', 'discriminator'];

function createAjv(coerceTypes: Options['coerceTypes']): Ajv {
  const ajv = new Ajv({
    coerceTypes,
    // Unknown fields are refused, never silently dropped (a typo must not change what is saved).
    removeAdditional: false,
    allErrors: true,
    verbose: true,
    useDefaults: true,
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
  const bodyAjv = createAjv(false);
  const textAjv = createAjv('array');
  return ({ schema, httpPart }) => onFirstUse(() => (httpPart === 'body' ? bodyAjv.compile(schema as object) : finiteOnly(textAjv.compile(schema as object))));
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

/**
 * Ajv coerces text such as `1e999` to Infinity and then passes it as an integer within any bounds;
 * no parameter of the spec can hold it, so it is refused as the wrong type.
 */
function finiteOnly(validate: ValidateFunction): ValidateFunction {
  const checked = ((data: unknown) => {
    if (!validate(data)) {
      checked.errors = validate.errors;
      return false;
    }
    const field = Object.entries(data as Record<string, unknown>).find(([, value]) => typeof value === 'number' && !Number.isFinite(value));
    if (field === undefined) {
      checked.errors = null;
      return true;
    }
    const properties = (validate.schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
    const error: ErrorObject = {
      keyword: 'type',
      instancePath: `/${field[0]}`,
      schemaPath: `#/properties/${field[0]}/type`,
      params: { type: properties[field[0]]?.type ?? 'number' },
      message: 'must be a finite number',
      data: field[1],
    };
    checked.errors = [error];
    return false;
  }) as ValidateFunction;
  checked.schema = validate.schema;
  return checked;
}
