import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadSpecification } from '../../src/api/contract/specification.js';
import { buildApp } from '../../src/api/app.js';
import { ServiceState } from '../../src/api/service-state.js';
import { testMediaSettings } from '../support/media-settings.js';

/**
 * The drift check between the routes Fastify serves and the operations the spec documents: a route
 * added beside glue, or an operation glue did not wire, fails here. (This is why the service does
 * without @fastify/swagger: glue wires the routes from the very document that is served.)
 */

const SPEC_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

async function specRoutes(): Promise<string[]> {
  const paths = (await loadSpecification()).document.paths as Record<string, Record<string, unknown>>;
  return Object.entries(paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((key) => SPEC_METHODS.includes(key))
      .map((method) => `${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ':$1')}`),
  );
}

/**
 * Every route Fastify registered, read from its route tree (`printRoutes`), as "METHOD /path".
 * The HEAD route Fastify adds beside each GET is left out; the spec does not list those.
 */
function registeredRoutes(app: FastifyInstance): string[] {
  const tree = app.printRoutes({ commonPrefix: false });
  const prefixes: string[] = [];
  const routes: string[] = [];
  for (const line of tree.split('\n').filter((l) => l.trim() !== '')) {
    const parsed = /^((?:│ {3}| {4})*)(?:├── |└── )(\S+)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!parsed) throw new Error(`Unexpected line in Fastify's route tree: ${line}`);
    const [, indent = '', segment = '', methods] = parsed;
    const depth = indent.length / 4;
    const path = (prefixes[depth - 1] ?? '') + segment;
    prefixes[depth] = path;
    const listed = methods?.split(', ') ?? [];
    for (const method of listed) {
      if (method === 'HEAD' && listed.includes('GET')) continue;
      routes.push(`${method} ${path}`);
    }
  }
  return routes;
}

const apps: FastifyInstance[] = [];
const media = testMediaSettings();
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});
afterAll(() => media.cleanup());

async function app(): Promise<FastifyInstance> {
  const built = await buildApp({ context: new ServiceState() });
  apps.push(built);
  return built;
}

describe('routes against the spec', () => {
  it('serves exactly the operations the spec documents, each at its path and method', async () => {
    const served = await app();
    await served.ready();
    const documented = await specRoutes();
    expect(documented.length).toBeGreaterThan(0);
    expect(registeredRoutes(served).sort()).toEqual(documented.sort());
  });

  it('notices a route the spec does not document', async () => {
    const served = await app();
    served.get('/api/v1/undocumented', () => ({}));
    await served.ready();
    const documented = new Set(await specRoutes());
    expect(registeredRoutes(served).filter((route) => !documented.has(route))).toEqual(['GET /api/v1/undocumented']);
  });
});
