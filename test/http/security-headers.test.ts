import { describe, expect, it } from 'vitest';
import { useTestApi } from '../support/api.js';
import { userWithKey } from '../support/fixtures.js';

const api = useTestApi();

describe('security headers', () => {
  it('lets an API answer load nothing, be framed nowhere, sniffed never, and names no server software', async () => {
    const { key } = await userWithKey(api.db);
    for (const res of [
      await api.request({ method: 'GET', url: '/api/v1/accounts', key }),
      await api.request({ method: 'GET', url: '/api/v1/accounts' }),
      await api.request({ method: 'GET', url: '/openapi.json' }),
    ]) {
      expect(res.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none';base-uri 'none';form-action 'none'");
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
      expect(res.headers['strict-transport-security']).toMatch(/^max-age=\d+; includeSubDomains$/);
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['x-powered-by']).toBeUndefined();
    }
  });

  it('gives the reference page a policy of its own: its inline script and styles, data images and fonts, and a blob worker', async () => {
    const res = await api.request({ method: 'GET', url: '/docs' });
    const policy = String(res.headers['content-security-policy']);
    expect(policy.split(';')).toEqual(
      expect.arrayContaining(["default-src 'none'", "script-src 'unsafe-inline'", "style-src 'unsafe-inline'", "img-src 'self' data:", 'worker-src blob:', "frame-ancestors 'none'"]),
    );
  });
});
