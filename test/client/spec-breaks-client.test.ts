import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, loadSpec, type JsonObject } from '../../scripts/spec-document.js';
import { repoBin, runBounded, type RunResult } from '../../scripts/spec-process.js';

// The client's README example is compiled with the repo's tsc against the generated types: it
// compiles against the current spec, and stops compiling when the spec changes in a way that
// breaks callers. That is what makes `npm run generate && npm run typecheck` catch such changes.

type Spec = JsonObject & {
  paths: Record<string, JsonObject>;
  components: { schemas: Record<string, JsonObject & { properties: Record<string, unknown>; required?: string[] }> };
};

const VARIANTS: Record<string, ((spec: Spec) => void) | undefined> = {
  current: undefined,
  renamedRequestField: (spec) => {
    const input = spec.components.schemas.PostCreateInput!;
    input.properties.targetAccountIds = input.properties.accountIds;
    delete input.properties.accountIds;
    input.required = ['targetAccountIds'];
  },
  removedOperation: (spec) => {
    delete spec.paths['/api/v1/accounts'];
    delete spec.paths['/api/v1/accounts/{id}'];
  },
  removedResponseField: (spec) => {
    const account = spec.components.schemas.Account!;
    delete account.properties.username;
    account.required = (account.required ?? []).filter((name) => name !== 'username');
  },
};

/** The README's TypeScript blocks, in order, as one module importing the client from source. */
function readmeExample(): string {
  const readme = readFileSync(join(REPO_ROOT, 'clients/typescript/README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
  expect(blocks.length).toBeGreaterThan(0);
  return blocks.join('\n').replace(/from '@herald\/client'/g, "from './clients/typescript/src/index.js'");
}

let dir: string;
let result: RunResult;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'herald-client-drift-'));
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const example = readmeExample();
  for (const [name, mutate] of Object.entries(VARIANTS)) {
    const root = join(dir, name);
    mkdirSync(join(root, 'generated'), { recursive: true });
    mkdirSync(join(root, 'clients/typescript/src'), { recursive: true });
    writeFileSync(join(root, 'package.json'), '{ "type": "module" }\n');
    copyFileSync(join(REPO_ROOT, 'clients/typescript/src/index.ts'), join(root, 'clients/typescript/src/index.ts'));
    writeFileSync(join(root, 'example.ts'), example);
    if (mutate === undefined) {
      copyFileSync(join(REPO_ROOT, 'generated/openapi.d.ts'), join(root, 'generated/openapi.d.ts'));
    } else {
      const spec = loadSpec() as Spec;
      mutate(spec);
      const ast = await openapiTS(spec as unknown as Parameters<typeof openapiTS>[0], { silent: true });
      writeFileSync(join(root, 'generated/openapi.d.ts'), astToString(ast));
    }
  }
  const rootConfig = JSON.parse(readFileSync(join(REPO_ROOT, 'tsconfig.json'), 'utf8')) as { compilerOptions: object };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: rootConfig.compilerOptions, include: ['*/example.ts'] }, null, 2));
  result = await runBounded(repoBin('tsc'), ['-p', join(dir, 'tsconfig.json'), '--pretty', 'false'], { cwd: dir, timeoutMs: 120_000 });
  expect(result.timedOut, 'tsc timed out').toBe(false);
}, 150_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function errorsOf(variant: string): string[] {
  return `${result.stdout}${result.stderr}`.split('\n').filter((line) => line.startsWith(`${variant}/`));
}

describe('the client against a changed spec', () => {
  it('compiles the README example against the current spec', () => {
    expect(errorsOf('current')).toEqual([]);
    expect(errorsOf('clients')).toEqual([]);
  });

  it('stops compiling when a request field is renamed', () => {
    expect(errorsOf('renamedRequestField').join('\n')).toMatch(/example\.ts.*'accountIds'/);
  });

  it('stops compiling when an operation is removed', () => {
    // The error is reported at the call of the removed path (its wording depends on the other paths' overloads).
    const line =
      readmeExample()
        .split('\n')
        .findIndex((text) => text.includes("herald.GET('/api/v1/accounts')")) + 1;
    expect(line).toBeGreaterThan(0);
    expect(errorsOf('removedOperation').join('\n')).toMatch(new RegExp(`example\\.ts\\(${line},`));
  });

  it('stops compiling when a response field is removed', () => {
    expect(errorsOf('removedResponseField').join('\n')).toMatch(/example\.ts.*'username'/);
  });

  it('fails the whole compilation, as npm run typecheck would', () => {
    expect(result.code).not.toBe(0);
  });
});
