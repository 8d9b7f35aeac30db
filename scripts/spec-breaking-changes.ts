/**
 * `npm run spec:breaking [-- RELEASED CURRENT]`: compares the current spec (default
 * openapi/openapi.yaml) with the last released one (default openapi/released/v1.yaml) and exits 1
 * when a change would break existing /api/v1 clients, listing each one. The rules are in
 * scripts/spec-compatibility.ts and docs/COMPATIBILITY.md; changes reviewed as compatible
 * (openapi/released/v1-accepted-changes.yaml) are listed apart with their reasons.
 */
import { relative, resolve as resolvePath } from 'node:path';
import { SPEC_PATH } from '../src/api/contract/specification.js';
import { compareSpecs } from './spec-compatibility.js';
import { ACCEPTED_CHANGES_PATH, RELEASED_SPEC_PATH, REPO_ROOT, loadAcceptedChanges, loadSpec } from './spec-document.js';

const [releasedArg, currentArg] = process.argv.slice(2);
const releasedPath = releasedArg ? resolvePath(releasedArg) : RELEASED_SPEC_PATH;
const currentPath = currentArg ? resolvePath(currentArg) : SPEC_PATH;
const name = (p: string) => relative(REPO_ROOT, p) || p;

try {
  const report = compareSpecs(loadSpec(releasedPath), loadSpec(currentPath));
  const reasons = new Map(loadAcceptedChanges().map((a) => [a.change, a.reason]));
  const accepted = report.breaking.filter((change) => reasons.has(change));
  const breaking = report.breaking.filter((change) => !reasons.has(change));
  if (report.added.length > 0) console.log(`New operations (not breaking):\n  ${report.added.join('\n  ')}`);
  if (report.notices.length > 0)
    console.log(`New response values (not breaking; clients must accept values they do not know):\n  ${report.notices.join('\n  ')}`);
  if (accepted.length > 0) {
    const lines = accepted.map((change) => `${change}\n    (${reasons.get(change)})`);
    console.log(`Flagged but reviewed as compatible (${name(ACCEPTED_CHANGES_PATH)}):\n  ${lines.join('\n  ')}`);
  }
  if (breaking.length > 0) {
    console.error(`${breaking.length} breaking change(s) from ${name(releasedPath)} to ${name(currentPath)}:\n  ${breaking.join('\n  ')}`);
    console.error('Within /api/v1 these are not allowed (docs/COMPATIBILITY.md): make the change compatible, or plan a /api/v2.');
    process.exit(1);
  }
  console.log(`No breaking changes from ${name(releasedPath)} to ${name(currentPath)}.`);
} catch (err) {
  console.error(`spec:breaking: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(2);
}
