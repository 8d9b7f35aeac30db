import { describe, expect, it } from 'vitest';
import { useTestApi } from '../support/api.js';
import { userWithKey } from '../support/fixtures.js';

const api = useTestApi();

describe('security headers', () => {
  it('lets an API answer load nothing, be framed nowhere, sniffed never, and names no server software', async () => {
    const { key } = await userWithKey(api.db);
    const answers = [
      await api.request({ method: 'GET', url: '/api/v1/accounts', key }),
      await api.request({ method: 'GET', url: '/api/v1/accounts' }),
      await api.request({ method: 'GET', url: '/openapi.json' }),
      // Refusals and errors too: a missing route, an operation's 404, a schema failure, a wrong content type.
      await api.request({ method: 'GET', url: '/no/such/path' }),
      await api.request({ method: 'GET', url: '/api/v1/posts/post_00000000000000000000000000', key }),
      await api.request({ method: 'POST', url: '/api/v1/posts', key, body: { accountIds: [] } }),
      await api.request({ method: 'POST', url: '/api/v1/posts', key, body: 'caption', headers: { 'content-type': 'text/plain' } }),
    ];
    expect(answers.map((res) => res.status)).toEqual([200, 401, 200, 404, 404, 400, 415]);
    for (const res of answers) {
      expect(res.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none';base-uri 'none';form-action 'none'");
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
      expect(res.headers['strict-transport-security']).toMatch(/^max-age=\d+; includeSubDomains$/);
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['x-powered-by']).toBeUndefined();
      // The rest of helmet's defaults.
      expect(res.headers).toMatchObject({
        'cross-origin-opener-policy': 'same-origin',
        'cross-origin-resource-policy': 'same-origin',
        'origin-agent-cluster': '?1',
        'x-dns-prefetch-control': 'off',
        'x-download-options': 'noopen',
        'x-permitted-cross-domain-policies': 'none',
        'x-xss-protection': '0',
      });
    }
  });

  it('gives the reference page a policy of its own: its inline script and styles, data images and fonts, and a blob worker', async () => {
    const res = await api.request({ method: 'GET', url: '/docs' });
    const policy = String(res.headers['content-security-policy']);
    expect(policy.split(';')).toEqual(
      expect.arrayContaining([
        "default-src 'none'",
        "script-src 'unsafe-inline'",
        "style-src 'unsafe-inline'",
        "img-src 'self' data:",
        'worker-src blob:',
        "frame-ancestors 'none'",
      ]),
    );
  });
});
