import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPEC_PATH } from '../../src/api/contract/specification.js';
import { REPO_ROOT, isObject, listOperations, loadSpec, type JsonObject } from '../../scripts/spec-document.js';
import { lintForConsumers } from '../../scripts/spec-lint.js';
import { repoBin, runBounded } from '../../scripts/spec-process.js';

// The spec as other tools read it: bundled by Redocly, validated by an independent parser, turned
// into a client by an independent generator (@hey-api/openapi-ts) that the repo's tsc compiles,
// and held to the rules that keep generated code and the docs useful.
let dir: string;
let bundledPath: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'herald-consumers-'));
  bundledPath = join(dir, 'bundled.json');
  const bundled = await runBounded(repoBin('redocly'), ['bundle', SPEC_PATH, '-o', bundledPath], { timeoutMs: 60_000 });
  expect(bundled.timedOut, 'redocly bundle timed out').toBe(false);
  expect(bundled.code, `redocly bundle failed:\n${bundled.stdout}${bundled.stderr}`).toBe(0);
}, 90_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function bundled(): JsonObject {
  return JSON.parse(readFileSync(bundledPath, 'utf8')) as JsonObject;
}

describe('the spec for its consumers', () => {
  it('bundles into one OpenAPI 3.1 JSON document with only local references', () => {
    const doc = bundled();
    expect(doc.openapi).toMatch(/^3\.1\./);
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]*"/g) ?? [];
    expect(refs.filter((ref) => !ref.startsWith('"$ref":"#/'))).toEqual([]);
    expect(listOperations(doc).map((op) => op.operationId)).toEqual(listOperations(loadSpec()).map((op) => op.operationId));
  });

  it('is valid for an independent validator (@readme/openapi-parser)', async () => {
    const result = await validate(bundledPath, { resolve: { external: false }, timeoutMs: 30_000 });
    const errors = result.valid ? [] : result.errors.map((e) => e.message);
    expect(errors).toEqual([]);
    expect(result.specification).toBe('OpenAPI');
  });

  it('generates a client with @hey-api/openapi-ts that the repo’s tsc compiles, one function per operation', async () => {
    const out = join(dir, 'hey-api');
    const generated = await runBounded(repoBin('openapi-ts'), ['-i', bundledPath, '-o', out, '-c', '@hey-api/client-fetch', '--no-log-file', '-s'], {
      cwd: dir,
      timeoutMs: 120_000,
    });
    expect(generated.timedOut, 'openapi-ts timed out').toBe(false);
    expect(generated.code, `openapi-ts failed:\n${generated.stdout}${generated.stderr}`).toBe(0);

    const sdk = readFileSync(join(out, 'sdk.gen.ts'), 'utf8');
    const exported = [...sdk.matchAll(/^export const (\w+) =/gm)].map((m) => m[1]);
    expect(exported.sort()).toEqual(
      listOperations(loadSpec())
        .map((op) => op.operationId)
        .sort(),
    );

    // A consumer of the generated SDK, compiled with the repo's strict options (plus the DOM
    // library, which a fetch client's types need).
    writeFileSync(
      join(dir, 'consumer.ts'),
      [
        "import { createClient } from './hey-api/client/index.js';",
        "import { createPost, listAccounts } from './hey-api/sdk.gen.js';",
        "import type { Post } from './hey-api/types.gen.js';",
        "const client = createClient({ baseUrl: 'http://127.0.0.1:3000', auth: 'hrld_example' });",
        'const accounts = await listAccounts({ client });',
        'const ids: string[] = accounts.data?.data.map((a) => a.id) ?? [];',
        "const created = await createPost({ client, body: { accountIds: ids, caption: 'Hello', scheduledAt: '2030-01-01T09:00:00Z' } });",
        "const status: Post['status'] | undefined = created.data?.status;",
        'export { status };',
        '',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const rootConfig = JSON.parse(readFileSync(join(REPO_ROOT, 'tsconfig.json'), 'utf8')) as { compilerOptions: Record<string, unknown> };
    const compilerOptions = { ...rootConfig.compilerOptions, lib: ['ES2022', 'DOM', 'DOM.Iterable'] };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['hey-api', 'consumer.ts'] }, null, 2));
    const compiled = await runBounded(repoBin('tsc'), ['-p', join(dir, 'tsconfig.json'), '--pretty', 'false'], { cwd: dir, timeoutMs: 120_000 });
    expect(compiled.timedOut, 'tsc timed out').toBe(false);
    expect(`${compiled.stdout}${compiled.stderr}`.trim()).toBe('');
    expect(compiled.code).toBe(0);
  }, 180_000);

  it('describes every schema, names, summarises, tags and exemplifies every operation, and names every body schema', () => {
    expect(lintForConsumers(loadSpec())).toEqual([]);
  });

  it('names each offender of those rules', () => {
    const spec = loadSpec() as JsonObject & { paths: Record<string, Record<string, JsonObject>>; components: { schemas: Record<string, JsonObject> } };
    delete spec.components.schemas.Post!.description;
    const listPosts = spec.paths['/api/v1/posts']!.get!;
    delete listPosts.summary;
    delete listPosts.tags;
    const ok = (listPosts.responses as Record<string, JsonObject>)['200']!;
    const media = (ok.content as Record<string, JsonObject>)['application/json']!;
    media.schema = { type: 'object', properties: { data: { type: 'array' } } };
    delete media.examples;
    const createPost = spec.paths['/api/v1/posts']!.post!;
    const body = (createPost.requestBody as { content: Record<string, JsonObject> }).content['application/json']!;
    body.schema = { type: 'array', items: { $ref: '#/components/schemas/PostCreateInput' } };
    delete createPost.operationId;
    expect(isObject(spec.components.schemas.Post)).toBe(true);

    expect(lintForConsumers(spec).sort()).toEqual(
      [
        'components.schemas.Post: no description',
        'GET /api/v1/posts: no summary',
        'GET /api/v1/posts: no tags',
        'GET /api/v1/posts response 200 (application/json): inline schema; use a $ref to components.schemas',
        'GET /api/v1/posts response 200 (application/json): no example',
        'POST /api/v1/posts: no operationId',
        'POST /api/v1/posts request body (application/json): inline schema; use a $ref to components.schemas',
      ].sort(),
    );
  });
});
