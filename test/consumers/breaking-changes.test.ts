import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { compareSpecs } from '../../scripts/spec-compatibility.js';
import { RELEASED_SPEC_PATH, REPO_ROOT, loadAcceptedChanges, loadSpec, type JsonObject } from '../../scripts/spec-document.js';
import { STORABLE_TEXT_PATTERN } from '../../src/domain/text.js';
import { repoBin, runBounded } from '../../scripts/spec-process.js';

// The /api/v1 compatibility check (npm run spec:breaking), on modified in-memory copies of the
// current spec: each change below is compared against the unmodified spec.

interface Schema extends JsonObject {
  properties: Record<string, JsonObject>;
  required?: string[];
  enum?: unknown[];
}
type Spec = JsonObject & {
  paths: Record<string, Record<string, JsonObject & { parameters?: unknown[] }>>;
  components: { schemas: Record<string, Schema> };
};

const base = loadSpec() as Spec;

function breakingAfter(change: (spec: Spec) => void): string[] {
  const changed = structuredClone(base);
  change(changed);
  return compareSpecs(base, changed).breaking;
}

describe('the breaking-change check', () => {
  it('finds none between the spec and itself', () => {
    expect(compareSpecs(base, structuredClone(base))).toEqual({ breaking: [], added: [], notices: [] });
  });

  it('flags a removed operation', () => {
    const breaking = breakingAfter((spec) => {
      delete spec.paths['/api/v1/accounts']!.get;
    });
    expect(breaking).toEqual(['GET /api/v1/accounts (listAccounts): operation removed']);
  });

  it('flags a renamed path as the removal of its operations', () => {
    const breaking = breakingAfter((spec) => {
      spec.paths['/api/v1/social-accounts'] = spec.paths['/api/v1/accounts']!;
      delete spec.paths['/api/v1/accounts'];
    });
    expect(breaking).toEqual(['GET /api/v1/accounts (listAccounts): operation removed', 'POST /api/v1/accounts (connectAccount): operation removed']);
  });

  it('flags a removed response field', () => {
    const breaking = breakingAfter((spec) => {
      const post = spec.components.schemas.Post!;
      delete post.properties.userId;
      post.required = post.required?.filter((name) => name !== 'userId');
    });
    expect(breaking).toEqual(['GET /api/v1/posts (listPosts) response 200 (application/json): field data[].userId removed']);
  });

  it('flags a new required request field', () => {
    const breaking = breakingAfter((spec) => {
      const input = spec.components.schemas.PostCreateInput!;
      input.properties.title = { type: 'string', description: 'A title.' };
      input.required = [...(input.required ?? []), 'title'];
    });
    // The create body is also validatePost's: one schema, both operations.
    expect(breaking).toEqual([
      'POST /api/v1/posts (createPost) request body (application/json): new required field title',
      'POST /api/v1/posts/validate (validatePost) request body (application/json): new required field title',
    ]);
  });

  it('flags an optional request field made required', () => {
    const breaking = breakingAfter((spec) => {
      const input = spec.components.schemas.PostCreateInput!;
      input.required = [...(input.required ?? []), 'caption'];
    });
    expect(breaking).toEqual([
      'POST /api/v1/posts (createPost) request body (application/json): field caption is now required',
      'POST /api/v1/posts/validate (validatePost) request body (application/json): field caption is now required',
    ]);
  });

  it('flags a narrowed enum, in the requests that send it and the responses that return it', () => {
    const breaking = breakingAfter((spec) => {
      spec.components.schemas.PostType!.enum = ['post', 'carousel', 'reel', 'short', 'thread'];
    });
    expect(breaking).toContain('POST /api/v1/posts (createPost) request body (application/json) postType: value "story" no longer accepted');
    expect(breaking).toContain('GET /api/v1/posts (listPosts) response 200 (application/json) data[].postType: value "story" removed');
  });

  it('flags narrower limits, changed types and removed statuses', () => {
    const breaking = breakingAfter((spec) => {
      spec.components.schemas.PostCreateInput!.properties.caption!.maxLength = 280;
      spec.components.schemas.Media!.properties.bytes!.type = 'string';
      const responses = spec.paths['/api/v1/posts']!.post!.responses as Record<string, unknown>;
      responses['200'] = responses['201'];
      delete responses['201'];
    });
    expect(breaking).toEqual(
      expect.arrayContaining([
        'POST /api/v1/posts (createPost) request body (application/json) caption: maxLength lowered from 100000 to 280',
        'GET /api/v1/media (listMedia) response 200 (application/json) data[].bytes: type integer changed to string; may now be string',
        'POST /api/v1/posts (createPost) response 201: status removed',
      ]),
    );
  });

  it('passes added optional fields, new response fields, new operations and new error statuses', () => {
    const changed = structuredClone(base);
    const input = changed.components.schemas.PostCreateInput!;
    input.properties.title = { type: 'string', maxLength: 200, description: 'A title, where the platform has one.' };
    changed.components.schemas.Post!.properties.title = { type: ['string', 'null'], description: 'The title.' };
    changed.components.schemas.Post!.required?.push('title');
    changed.paths['/api/v1/posts']!.get!.parameters?.push({ name: 'since', in: 'query', required: false, schema: { type: 'string' } });
    const list = changed.paths['/api/v1/posts']!.get!;
    (list.responses as Record<string, unknown>)['409'] = { $ref: '#/components/responses/InternalError' };
    changed.paths['/api/v1/posts/{id}/duplicate'] = {
      post: { ...structuredClone(changed.paths['/api/v1/posts/{id}/publish']!.post!), operationId: 'duplicatePost' },
    };
    changed.components.schemas.PostCreateInput!.properties.caption!.maxLength = 200_000;

    const report = compareSpecs(base, changed);
    expect(report.breaking).toEqual([]);
    expect(report.added).toEqual(['POST /api/v1/posts/{id}/duplicate (duplicatePost)']);
  });

  it('passes the storable-text pattern on a request string, but flags any other new pattern', () => {
    const released = loadSpec(RELEASED_SPEC_PATH) as Spec;
    const changed = structuredClone(released);
    changed.components.schemas.AccountOverride!.properties.captionOverride!.pattern = STORABLE_TEXT_PATTERN;
    changed.components.schemas.PostCreateInput!.properties.caption!.pattern = '^[a-z]*$';
    expect(compareSpecs(released, changed).breaking).toEqual([
      'POST /api/v1/posts (createPost) request body (application/json) caption: pattern "none" changed to "^[a-z]*$"',
    ]);
  });

  it('has an accepted change only for what is still flagged between the released v1 and the spec', () => {
    const flagged = compareSpecs(loadSpec(RELEASED_SPEC_PATH), base).breaking;
    for (const { change } of loadAcceptedChanges()) expect(flagged).toContain(change);
  });

  it('passes a new response enum value, and lists it as a notice', () => {
    const changed = structuredClone(base);
    changed.components.schemas.PostStatus!.enum?.push('archived');
    const report = compareSpecs(base, changed);
    expect(report.breaking).toEqual([]);
    expect(report.notices).toContain('GET /api/v1/posts (listPosts) response 200 (application/json) data[].status: new value "archived"');
    expect(report.notices).toContain('GET /api/v1/posts/{id} (getPost) response 200 (application/json) status: new value "archived"');
  });
});

describe('npm run spec:breaking', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'herald-breaking-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const run = (...args: string[]) => runBounded(repoBin('tsx'), ['scripts/spec-breaking-changes.ts', ...args], { cwd: REPO_ROOT, timeoutMs: 60_000 });

  it('finds the current spec compatible with the released v1, listing the accepted changes with their reasons', async () => {
    const result = await run();
    expect(result.stderr).not.toMatch(/breaking change/);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('No breaking changes from openapi/released/v1.yaml to openapi/openapi.yaml');
    for (const { change, reason } of loadAcceptedChanges()) expect(result.stdout).toContain(`${change}\n    (${reason})`);
  });

  it('exits 1 and names each breaking change', async () => {
    const changed = loadSpec(RELEASED_SPEC_PATH) as Spec;
    delete changed.paths['/api/v1/accounts'];
    const path = join(dir, 'changed.yaml');
    writeFileSync(path, stringify(changed));
    const result = await run(RELEASED_SPEC_PATH, path);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('GET /api/v1/accounts (listAccounts): operation removed');
  });
});
