import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { buildDocs, checkRenderedDocs, chromiumMissing, expectedOperations } from '../../scripts/docs-reference.js';
import { loadSpec } from '../../scripts/spec-document.js';
import { buildApp } from '../../src/http/app.js';
import { ServiceState } from '../../src/http/service-state.js';
import { testMediaSettings } from '../support/media-settings.js';

// The HTML reference (`npm run docs`), opened offline in Debian's headless Chromium: it must
// render, and show every operation of the spec with its summary and path.
let dir: string;
let htmlPath: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'herald-docs-'));
  htmlPath = join(dir, 'index.html');
  await buildDocs(htmlPath, { timeoutMs: 60_000 });
}, 90_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the HTML reference', () => {
  it('is one self-contained file: no script or stylesheet is loaded from elsewhere', () => {
    const html = readFileSync(htmlPath, 'utf8');
    expect(html).not.toMatch(/<script[^>]*\bsrc=["']?https?:/i);
    expect(html).not.toMatch(/<link[^>]*rel=["']?(modulepreload|stylesheet)[^>]*href=["']?https?:/i);
    expect(html).toContain('Herald API');
  });

  it('renders every operation of the spec in headless Chromium, with the network refused', async () => {
    const missing = chromiumMissing();
    if (missing) expect.fail(missing);
    const screenshotPath = join(dir, 'screenshot.png');
    const report = await checkRenderedDocs({ htmlPath, screenshotPath, timeoutMs: 90_000 });
    expect(report.problems).toEqual([]);
    const expected = expectedOperations().operations;
    expect(expected.length).toBeGreaterThan(0);
    expect(report.operations.map((op) => [op.operationId, op.rendered])).toEqual(expected.map((op) => [op.operationId, true]));
    expect(statSync(screenshotPath).size).toBeGreaterThan(20_000);
  }, 120_000);

  it('renders as the service serves it, under its content security policy, with nothing refused', async () => {
    const missing = chromiumMissing();
    if (missing) expect.fail(missing);
    const app = await buildApp({ context: new ServiceState(testMediaSettings()), referenceHtmlPath: htmlPath });
    try {
      const base = await app.listen({ host: '127.0.0.1', port: 0 });
      const served = await fetch(`${base}/docs`);
      expect(served.status).toBe(200);
      const policy = served.headers.get('content-security-policy') ?? '';
      expect(policy).toContain("default-src 'none'");
      expect(policy).toContain("frame-ancestors 'none'");
      expect(served.headers.get('x-content-type-options')).toBe('nosniff');
      const report = await checkRenderedDocs({ htmlPath, pageUrl: `${base}/docs`, screenshotPath: join(dir, 'served.png'), timeoutMs: 90_000 });
      expect(report.problems).toEqual([]);
      expect(report.operations.every((op) => op.rendered)).toBe(true);
      // Only other places were refused: Redoc's logo on its CDN, which the page shows without.
      expect(report.refusedRequests.every((url) => !url.startsWith(base))).toBe(true);
    } finally {
      await app.close();
    }
  }, 120_000);

  it('names an operation of the spec that the page does not show', async () => {
    const missing = chromiumMissing();
    if (missing) expect.fail(missing);
    // The page was built from the real spec; check it against a spec with one more operation.
    const spec = loadSpec();
    const paths = spec.paths as Record<string, Record<string, unknown>>;
    paths['/api/v1/ghosts'] = {
      get: { operationId: 'listGhosts', tags: ['Posts'], summary: 'List ghosts', responses: { '200': { description: 'ok' } } },
    };
    const specPath = join(dir, 'with-ghost.yaml');
    writeFileSync(specPath, stringify(spec));
    const report = await checkRenderedDocs({ htmlPath, specPath, screenshotPath: join(dir, 'ghost.png'), timeoutMs: 90_000 });
    expect(report.problems).toEqual(['operation listGhosts (GET /api/v1/ghosts) is not on the page']);
  }, 120_000);
});
