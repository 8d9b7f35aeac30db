/**
 * `npm run docs:check`: builds docs/index.html (as `npm run build` does) and checks it in headless
 * Chromium (Debian's `chromium`), with the network refused. Opened as a file, it must render every
 * operation of openapi/openapi.yaml (docs/screenshot.png shows the first); served by Herald at /docs,
 * under its content security policy, it must render with nothing of its own refused; and the check
 * itself must name an operation the page does not show. Exits 1 naming each problem. `npm test`
 * checks the reference without a browser (test/docs/reference.test.ts).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { stringify } from 'yaml';
import { REFERENCE_HTML_PATH } from '../src/api/contract/specification.js';
import { buildApp } from '../src/api/app.js';
import { ServiceState } from '../src/api/service-state.js';
import { buildDocs } from './build.js';
import { DOCS_SCREENSHOT_PATH, checkRenderedDocs, chromiumMissing } from './docs-reference.js';
import { REPO_ROOT, loadSpec } from './spec-document.js';

async function main(): Promise<number> {
  const missing = chromiumMissing();
  if (missing) {
    console.error(missing);
    return 1;
  }
  const started = Date.now();
  await buildDocs();
  console.log(`built ${relative(REPO_ROOT, REFERENCE_HTML_PATH)} in ${Date.now() - started} ms`);
  const dir = await mkdtemp(join(tmpdir(), 'herald-docs-check-'));
  try {
    const problems = [...(await asFile()), ...(await asServed(dir)), ...(await missingOperationNamed(dir))];
    console.log(`${Date.now() - started} ms in all`);
    if (problems.length > 0) {
      console.error(`docs check failed:\n  ${problems.join('\n  ')}`);
      return 1;
    }
    return 0;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function asFile(): Promise<string[]> {
  const report = await checkRenderedDocs({ htmlPath: REFERENCE_HTML_PATH, screenshotPath: DOCS_SCREENSHOT_PATH });
  for (const op of report.operations) console.log(`${op.rendered ? 'ok  ' : 'MISS'} ${op.operationId.padEnd(20)} ${op.method} ${op.path}  "${op.summary}"`);
  if (report.refusedRequests.length > 0) console.log(`refused (page works without them): ${report.refusedRequests.join(', ')}`);
  console.log(
    `as a file: "${report.title}", ${report.operations.filter((op) => op.rendered).length} of ${report.operations.length} operations rendered; screenshot ${relative(REPO_ROOT, report.screenshotPath)}`,
  );
  return report.problems;
}

/** Herald's headers apply here: a script or style of the page that its policy refuses is a problem. */
async function asServed(dir: string): Promise<string[]> {
  const app = await buildApp({ context: new ServiceState() });
  try {
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    const report = await checkRenderedDocs({ pageUrl: `${base}/docs`, screenshotPath: join(dir, 'served.png') });
    const problems = report.problems.map((p) => `served at /docs: ${p}`);
    // Only other places may be refused (Redoc's logo on its CDN, which the page shows without).
    for (const url of report.refusedRequests.filter((u) => u.startsWith(base))) problems.push(`served at /docs: the page's own ${url} was refused`);
    console.log(`as served at /docs: ${report.operations.filter((op) => op.rendered).length} of ${report.operations.length} operations rendered`);
    return problems;
  } finally {
    await app.close();
  }
}

/** The check against a spec with one operation more than the page: it must name that one, and only it. */
async function missingOperationNamed(dir: string): Promise<string[]> {
  const spec = loadSpec();
  const paths = spec.paths as Record<string, Record<string, unknown>>;
  paths['/api/v1/ghosts'] = { get: { operationId: 'listGhosts', tags: ['Posts'], summary: 'List ghosts', responses: { '200': { description: 'ok' } } } };
  const specPath = join(dir, 'with-ghost.yaml');
  await writeFile(specPath, stringify(spec));
  const report = await checkRenderedDocs({ specPath, screenshotPath: join(dir, 'ghost.png') });
  const expected = 'operation listGhosts (GET /api/v1/ghosts) is not on the page';
  const named = report.problems.length === 1 && report.problems[0] === expected;
  console.log(`a missing operation ${named ? 'is' : 'is NOT'} named by the check`);
  return named ? [] : [`the check should report only "${expected}" for a spec with one more operation; it reported ${JSON.stringify(report.problems)}`];
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
