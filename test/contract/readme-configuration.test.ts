import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIGURATION, readEnvironment } from '../../src/cli/wiring/configuration.js';

const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## Configuration'));
const rows = new Map(
  [...section.matchAll(/^\| `([A-Z0-9_]+)` \| ([^|]+) \| ([^|]+) \|$/gm)].map((m) => [m[1] ?? '', { defaultCell: m[2] ?? '', meaning: m[3] ?? '' }]),
);
const properties = CONFIGURATION.properties as Record<string, { default?: string | number | boolean }>;

// The README's configuration table against the service's one table of variables: a variable the
// service reads that the README does not name, a row for one it no longer reads, or a default that
// differs, fails here.
describe("the README's configuration table", () => {
  it('names exactly the variables of the configuration table (and the tests-only ones, marked so)', () => {
    const documented = [...rows.keys()].filter((name) => !name.startsWith('TEST_'));
    expect(documented.sort()).toEqual(Object.keys(properties).sort());
    for (const [name, row] of rows) if (name.startsWith('TEST_')) expect(row.meaning, name).toMatch(/^\s*Tests only/);
  });

  it('gives each default as the table defines it', () => {
    for (const [name, property] of Object.entries(properties)) {
      const cell = rows.get(name)?.defaultCell.trim() ?? '';
      if (property.default === undefined) expect(cell, name).toMatch(/^unset$|\$[A-Z]+/);
      else expect(cell.match(/^`([^`]*)`/)?.[1], name).toBe(String(property.default));
    }
  });
});

describe('the configuration table', () => {
  it('refuses a value out of bounds, naming the variable, the rule and the value', () => {
    expect(() => readEnvironment({ PORT: '70000', HERALD_WORKER_CONCURRENCY: '0' })).toThrow(
      'PORT must be <= 65535, got 70000; HERALD_WORKER_CONCURRENCY must be >= 1, got 0',
    );
    expect(() => readEnvironment({ HERALD_WORKER: 'maybe' })).toThrow('HERALD_WORKER must be boolean, got maybe');
    expect(() => readEnvironment({ LOG_LEVEL: 'loud' })).toThrow('LOG_LEVEL must be equal to one of the allowed values, got loud');
  });

  it("refuses Reddit without the developer's Reddit username its User-Agent must name, naming the variable", () => {
    const reddit = { HERALD_REDDIT_CLIENT_ID: 'p-jcoLKBynTLew', HERALD_REDDIT_CLIENT_SECRET: 'gko_LXELoV07ZBNUXrvWZfzE3aI' };
    expect(() => readEnvironment(reddit)).toThrow(/^HERALD_REDDIT_USERNAME must be set with HERALD_REDDIT_CLIENT_ID/);
    expect(() => readEnvironment({ ...reddit, HERALD_REDDIT_USERNAME: '/u/someone' })).toThrow(/HERALD_REDDIT_USERNAME must match pattern/);
    expect(readEnvironment({ ...reddit, HERALD_REDDIT_USERNAME: 'kemitche' }).platforms.reddit.username).toBe('kemitche');
  });

  it('takes blank values as unset and flags as true, false, 1 or 0 in any case', () => {
    const env = readEnvironment({ PORT: ' ', HERALD_WORKER: '0', HERALD_ALLOW_PRIVATE_NETWORK: 'TRUE', HERALD_POLL_INTERVAL_MS: '50' });
    expect(env.port).toBe(3000);
    expect(env.inProcessWorker).toBe(false);
    expect(env.allowPrivateNetwork).toBe(true);
    expect(env.publishing.pollIntervalMs).toBe(50);
    expect(readEnvironment({}).publishing.pollIntervalMs).toBeNull();
    expect(readEnvironment({ PORT: '8080' }).publicUrl).toBe('http://127.0.0.1:8080');
  });
});
