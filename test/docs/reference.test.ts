import { describe, expect, it } from 'vitest';
import { listOperations, loadSpec } from '../../scripts/spec-document.js';
import { buildApp } from '../../src/api/app.js';
import { ServiceState } from '../../src/api/service-state.js';
import { injectChecked } from '../support/api.js';
import { testMediaSettings } from '../support/media-settings.js';

// The HTML reference that `npm run build` (so `npm install`, and this run's setup) makes beside the
// binary, as `herald serve` answers it at /docs. Checked without a browser; `npm run docs:check`
// renders it in headless Chromium.
describe('the HTML reference served at /docs', () => {
  it('is one self-contained page titled as the spec, carrying every operation, under a policy that refuses anything from elsewhere', async () => {
    const media = testMediaSettings();
    const app = await buildApp({ context: new ServiceState() });
    try {
      const res = await injectChecked<string>(app, { method: 'GET', url: '/docs' });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      const policy = String(res.headers['content-security-policy']);
      expect(policy).toContain("default-src 'none'");
      expect(policy).toContain("frame-ancestors 'none'");
      expect(res.headers['x-content-type-options']).toBe('nosniff');

      const spec = loadSpec();
      const title = (spec.info as { title: string }).title;
      expect(title).toBe('Herald API');
      expect(res.body).toContain(`<title>${title}</title>`);
      expect(res.body).not.toMatch(/<script[^>]*\bsrc=["']?https?:/i);
      expect(res.body).not.toMatch(/<link[^>]*rel=["']?(modulepreload|stylesheet)[^>]*href=["']?https?:/i);
      // Redoc renders the operations from the spec embedded in the page.
      const operationIds = listOperations(spec).map((op) => op.operationId);
      expect(operationIds.length).toBeGreaterThan(0);
      expect(operationIds.filter((id) => !res.body.includes(`"operationId":"${id}"`))).toEqual([]);
    } finally {
      await app.close();
      media.cleanup();
    }
  });
});
