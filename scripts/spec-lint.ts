import { isObject, listOperations, resolve, type JsonObject } from './spec-document.js';

/**
 * The rules that keep the spec pleasant for people and generators reading it, beyond Redocly's
 * recommended set. Each problem names where it is, e.g.
 * `POST /api/v1/posts response 400 (application/json): no example`.
 *
 * - every schema under components.schemas has a description;
 * - every operation has an operationId, a summary and at least one tag;
 * - every response with a body has an example (`example` or `examples`) for each media type;
 * - no request or response body is an inline anonymous object (or array) schema: it must be a
 *   `$ref` to components.schemas, so every generator gives it the same, stable name.
 */
export function lintForConsumers(doc: JsonObject): string[] {
  const problems: string[] = [];

  const components = isObject(doc.components) ? doc.components : {};
  const schemas = isObject(components.schemas) ? components.schemas : {};
  for (const [name, schema] of Object.entries(schemas)) {
    if (!isObject(schema) || typeof schema.$ref === 'string') continue;
    if (!nonEmptyString(schema.description)) problems.push(`components.schemas.${name}: no description`);
  }

  for (const op of listOperations(doc)) {
    const where = `${op.method.toUpperCase()} ${op.path}`;
    if (!nonEmptyString(op.operationId)) problems.push(`${where}: no operationId`);
    if (!nonEmptyString(op.summary)) problems.push(`${where}: no summary`);
    if (op.tags.length === 0) problems.push(`${where}: no tags`);

    const body = resolve(doc, op.operation.requestBody);
    if (isObject(body) && isObject(body.content)) {
      for (const [mediaType, media] of Object.entries(body.content)) {
        if (isObject(media) && isInlineStructure(media.schema))
          problems.push(`${where} request body (${mediaType}): inline schema; use a $ref to components.schemas`);
      }
    }

    const responses = isObject(op.operation.responses) ? op.operation.responses : {};
    for (const [status, raw] of Object.entries(responses)) {
      const response = resolve(doc, raw);
      if (!isObject(response) || !isObject(response.content)) continue;
      for (const [mediaType, media] of Object.entries(response.content)) {
        const at = `${where} response ${status} (${mediaType})`;
        if (!isObject(media)) continue;
        if (isInlineStructure(media.schema)) problems.push(`${at}: inline schema; use a $ref to components.schemas`);
        const hasExamples = isObject(media.examples) && Object.keys(media.examples).length > 0;
        // A file's bytes (format: binary) have no example a reader or a generator could use.
        const binary = isObject(media.schema) && media.schema.format === 'binary';
        if (media.example === undefined && !hasExamples && !binary) problems.push(`${at}: no example`);
      }
    }
  }
  return problems;
}

function nonEmptyString(value: unknown): boolean {
  return typeof value === 'string' && value.trim() !== '';
}

/** An inline (non-$ref) schema describing an object or an array: something that needs a name. */
function isInlineStructure(schema: unknown): boolean {
  if (!isObject(schema) || typeof schema.$ref === 'string') return false;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('object') || types.includes('array')) return true;
  return ['properties', 'additionalProperties', 'patternProperties', 'items', 'allOf', 'oneOf', 'anyOf'].some((key) => key in schema);
}
