import { readFileSync, writeFileSync } from 'node:fs';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildApp } from '../../src/api/app.js';
import { SPEC_PATH } from '../../src/api/contract/specification.js';
import { injectChecked, useTestApi } from '../support/api.js';
import { expectMatchesSpec } from '../support/contract.js';

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

  it('serves the reference page and the spec compressed to a client that accepts it, the same bytes once unpacked', async () => {
    const html = join(api.media.root, 'compressed.html');
    writeFileSync(html, `<!DOCTYPE html><html><body>${'Herald API '.repeat(20_000)}</body></html>`);
    const app = await buildApp({ context: api.state, referenceHtmlPath: html });
    try {
      for (const url of ['/docs', '/openapi.yaml', '/openapi.json']) {
        const plain = await app.inject({ method: 'GET', url });
        expect(plain.headers['content-encoding'], url).toBeUndefined();
        expect(plain.headers.vary, url).toContain('Accept-Encoding');
        for (const [accept, encoding, unpack] of [
          ['gzip, deflate, br', 'br', brotliDecompressSync],
          ['gzip', 'gzip', gunzipSync],
          ['br;q=0, gzip', 'gzip', gunzipSync],
        ] as const) {
          const res = await app.inject({ method: 'GET', url, headers: { 'accept-encoding': accept } });
          expect([url, accept, res.statusCode, res.headers['content-encoding']]).toEqual([url, accept, 200, encoding]);
          expect(res.rawPayload.length, `${url} ${accept}`).toBeLessThan(plain.rawPayload.length / 3);
          const text = unpack(res.rawPayload).toString('utf8');
          expect(text, `${url} ${accept}`).toBe(plain.body);
          const isJson = String(res.headers['content-type']).startsWith('application/json');
          expectMatchesSpec({ method: 'GET', url, status: res.statusCode, headers: res.headers, body: isJson ? JSON.parse(text) : text });
        }
      }
    } finally {
      await app.close();
    }
  });
});
