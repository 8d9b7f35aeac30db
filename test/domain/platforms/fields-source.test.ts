import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PLATFORM_FIELDS_MODULE_PATH, readPlatformFieldsSchemas, renderPlatformFieldsModule } from '../../../scripts/platform-fields.js';
import { loadSpec, type JsonObject } from '../../../scripts/spec-document.js';
import { platformRules } from '../../../src/domain/platforms/index.js';

// The spec's XFields … RedditFields are the one source of what `fields` accepts;
// generated/platform-fields.ts is derived from them (npm run generate).

/** A copy of the spec whose YoutubeFields.properties.<key> is changed by `edit`. */
function specWithYoutubeField(key: string, edit: (property: JsonObject) => void): JsonObject {
  const spec = loadSpec();
  const schemas = (spec.components as JsonObject).schemas as Record<string, JsonObject>;
  const properties = schemas.YoutubeFields?.properties as Record<string, JsonObject>;
  edit(properties[key] as JsonObject);
  return spec;
}

describe('generated/platform-fields.ts', () => {
  it('is what the spec gives today (run npm run generate after editing the spec)', () => {
    expect(readFileSync(PLATFORM_FIELDS_MODULE_PATH, 'utf8')).toBe(renderPlatformFieldsModule(loadSpec()));
  });

  it('has one platform per schema, and they are the platforms of the rules table', () => {
    const ids = readPlatformFieldsSchemas(loadSpec()).map((platform) => platform.id);
    expect(ids).toEqual(platformRules.map((platform) => platform.id));
  });

  it('follows a change of a limit in the spec in both views, the served field and the schema', () => {
    const [youtube] = readPlatformFieldsSchemas(specWithYoutubeField('title', (title) => (title.maxLength = 90))).filter(
      (platform) => platform.id === 'youtube',
    );
    expect(youtube?.fields.find((field) => field.key === 'title')?.maxLength).toBe(90);
    expect(JSON.stringify(youtube?.schema)).toContain('"maxLength":90');
  });
});

describe('the generator refuses what GET /api/v1/platforms could not serve', () => {
  it.each([
    [
      'a keyword PlatformField has no place for',
      (p: JsonObject) => (p.minItems = 1),
      'YoutubeFields.properties.tags: minItems cannot be served as a PlatformField',
    ],
    ['a keyword of another type', (p: JsonObject) => (p.pattern = '^a'), 'YoutubeFields.properties.tags: pattern cannot be served as a PlatformField'],
    ['a field without a description', (p: JsonObject) => delete p.description, 'YoutubeFields.properties.tags.description: every field needs one'],
    [
      'a type PlatformField has no word for',
      (p: JsonObject) => (p.type = 'number'),
      'YoutubeFields.properties.tags.type: must be one of string, boolean, integer, array',
    ],
    ['array items other than strings', (p: JsonObject) => (p.items = { type: 'integer' }), 'YoutubeFields.properties.tags.items: must be type string'],
  ])('%s', (_name, edit, message) => {
    expect(() => renderPlatformFieldsModule(specWithYoutubeField('tags', edit))).toThrow(message);
  });

  it('a schema that lets unknown keys through', () => {
    const spec = loadSpec();
    const schemas = (spec.components as JsonObject).schemas as Record<string, JsonObject>;
    (schemas.XFields as JsonObject).additionalProperties = true;
    expect(() => renderPlatformFieldsModule(spec)).toThrow('components.schemas.XFields: must be type object with additionalProperties false');
  });
});
