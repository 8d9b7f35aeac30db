import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildApp } from '../../src/api/app.js';
import { SPEC_PATH } from '../../src/api/contract/specification.js';
import { injectChecked, useTestApi } from '../support/api.js';

const api = useTestApi();

describe('the reference, served by the service without a key', () => {
  it('serves the spec the routes were wired from, as JSON and as the YAML it is written in', async () => {
    const yaml = readFileSync(SPEC_PATH, 'utf8');
    const json = await api.request({ method: 'GET', url: '/openapi.json' });
    expect(json.status).toBe(200);
    expect(json.body).toEqual(parse(yaml));
    const text = await api.request({ method: 'GET', url: '/openapi.yaml' });
    expect(text.status).toBe(200);
    expect(text.headers['content-type']).toBe('application/yaml; charset=utf-8');
    expect(text.body).toBe(yaml);
  });

  it('sends whoever opens the root on to the reference at /docs, without a key', async () => {
    const res = await api.request({ method: 'GET', url: '/' });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/docs');
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body).toBe("Herald's API reference is at /docs\n");
  });

  it('serves the built HTML reference at /docs, and says how to build it when it is missing', async () => {
    const html = join(api.media.root, 'reference.html');
    writeFileSync(html, '<!DOCTYPE html><html><body>Herald API</body></html>');
    for (const [path, status] of [
      [html, 200],
      [join(api.media.root, 'missing.html'), 404],
    ] as const) {
      const app = await buildApp({ context: api.state, referenceHtmlPath: path });
      try {
        const res = await injectChecked(app, { method: 'GET', url: '/docs' });
        expect(res.status).toBe(status);
        if (status === 200) {
          expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
          expect(res.body).toContain('Herald API');
        } else {
          expect(res.body).toEqual({ error: 'API reference not built: run npm run docs', code: 'reference_not_built' });
        }
      } finally {
        await app.close();
      }
    }
  });
});
