import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEnvironment } from '../../src/cli/wiring/configuration.js';

// The README's configuration table against what the service reads: a setting the service takes
// that the README does not name, or a row for one it no longer reads, fails here.
describe("the README's configuration table", () => {
  it('names exactly the variables the service reads (and the tests-only ones, marked so)', () => {
    const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('## Configuration'));
    const rows = [...table.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((match) => match[1] ?? '');
    const read = new Set<string>();
    readEnvironment(new Proxy({}, { get: (_target, name) => (typeof name === 'string' && read.add(name), undefined) }));
    const testsOnly = rows.filter((name) => name.startsWith('TEST_'));
    expect(rows.filter((name) => !name.startsWith('TEST_')).sort()).toEqual([...read].sort());
    for (const name of testsOnly) expect(table).toMatch(new RegExp(`\\| \`${name}\` \\| [^|]+ \\| Tests only`));
  });
});
