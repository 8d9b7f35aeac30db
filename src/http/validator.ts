import { Ajv, type Options } from 'ajv';
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
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? bodyAjv : textAjv;
    return ajv.compile(schema as object);
  };
}
