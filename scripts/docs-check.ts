/**
 * `npm run docs:check`: builds docs/index.html (as `npm run docs` does), opens it offline in
 * headless Chromium, checks that every operation of openapi/openapi.yaml is rendered, and writes
 * docs/screenshot.png. Exits 1 naming what is missing.
 */
import { relative } from 'node:path';
import { REFERENCE_HTML_PATH } from '../src/contract/specification.js';
import { DOCS_SCREENSHOT_PATH, buildDocs, checkRenderedDocs, chromiumMissing } from './docs-reference.js';
import { REPO_ROOT } from './spec-document.js';

async function main(): Promise<number> {
  const missing = chromiumMissing();
  if (missing) {
    console.error(missing);
    return 1;
  }
  const started = Date.now();
  await buildDocs(REFERENCE_HTML_PATH);
  console.log(`built ${relative(REPO_ROOT, REFERENCE_HTML_PATH)} in ${Date.now() - started} ms`);
  const report = await checkRenderedDocs({ htmlPath: REFERENCE_HTML_PATH, screenshotPath: DOCS_SCREENSHOT_PATH });
  for (const op of report.operations) console.log(`${op.rendered ? 'ok  ' : 'MISS'} ${op.operationId.padEnd(20)} ${op.method} ${op.path}  "${op.summary}"`);
  if (report.refusedRequests.length > 0) console.log(`refused (page works without them): ${report.refusedRequests.join(', ')}`);
  console.log(`screenshot: ${relative(REPO_ROOT, report.screenshotPath)} (${Date.now() - started} ms in all)`);
  if (report.problems.length > 0) {
    console.error(`docs check failed:\n  ${report.problems.join('\n  ')}`);
    return 1;
  }
  console.log(`"${report.title}": all ${report.operations.length} operations rendered`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
