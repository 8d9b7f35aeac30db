import { describe, expect, it, vi } from 'vitest';
import { publicMediaUrl } from '../../src/domain/media/public-media.js';
import { useTestApi, type Schemas } from '../support/api.js';
import { userWithKey } from '../support/fixtures.js';
import { multipartBody } from '../support/media-files.js';
import { solidPng } from '../support/png.js';

// What a platform that pulls media by URL (Instagram, Threads, TikTok, Pinterest) meets: the file
// behind a signed, expiring URL, whole or by byte range, and nothing for a URL that is not one.
const api = useTestApi();
const png = solidPng(64, 48, [10, 200, 30]);
const HOUR = 3_600_000;

async function uploaded(): Promise<string> {
  const u = await userWithKey(api.db);
  const { payload, contentType } = multipartBody([{ name: 'file', value: png, filename: 'a.png', type: 'image/png' }]);
  const res = await api.request<Schemas['Media']>({ method: 'POST', url: '/api/v1/media', key: u.key, payload, headers: { 'content-type': contentType } });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** The path and query of a signed URL, as the platform would request it from the public URL's host. */
function pathOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

const signed = (id: string, expiresAt = new Date(Date.now() + 48 * HOUR)) => publicMediaUrl(api.publishing.serviceDeps.publicMedia, id, expiresAt);

/** The answer checked against the spec, then its raw bytes (the checked one is decoded as text). */
async function get(url: string, headers: Record<string, string> = {}) {
  await api.request({ method: 'GET', url: pathOf(url), headers });
  return api.app.inject({ method: 'GET', url: pathOf(url), headers });
}

describe('GET /media/{id} by a signed URL', () => {
  it('answers HEAD with the same headers as GET without opening the file', async () => {
    const id = await uploaded();
    const url = signed(id);
    const storage = api.publishing.serviceDeps.storage;
    const open = vi.spyOn(storage, 'open');
    try {
      const head = await api.app.inject({ method: 'HEAD', url: pathOf(url) });
      expect(head.statusCode).toBe(200);
      expect(head.headers['content-type']).toBe('image/png');
      expect(Number(head.headers['content-length'])).toBe(png.length);
      expect(head.headers['accept-ranges']).toBe('bytes');
      expect(open).not.toHaveBeenCalled();
    } finally {
      open.mockRestore();
    }
  });

  it('answers the whole file with its exact type and length, byte ranges as 206, and no key needed', async () => {
    const id = await uploaded();
    const url = signed(id);
    expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/media/${id}\\?expires=\\d+&signature=[\\w-]+$`));

    const whole = await get(url);
    expect(whole.statusCode).toBe(200);
    expect(whole.headers['content-type']).toBe('image/png');
    expect(Number(whole.headers['content-length'])).toBe(png.length);
    expect(whole.headers['accept-ranges']).toBe('bytes');
    expect(whole.rawPayload.equals(png)).toBe(true);

    const first = await get(url, { range: 'bytes=0-9' });
    expect(first.statusCode).toBe(206);
    expect(first.headers['content-range']).toBe(`bytes 0-9/${png.length}`);
    expect(Number(first.headers['content-length'])).toBe(10);
    expect(first.rawPayload.equals(png.subarray(0, 10))).toBe(true);

    const tail = await get(url, { range: 'bytes=-5' });
    expect(tail.statusCode).toBe(206);
    expect(tail.rawPayload.equals(png.subarray(png.length - 5))).toBe(true);

    const open = await get(url, { range: `bytes=${png.length - 3}-` });
    expect(open.statusCode).toBe(206);
    expect(open.headers['content-range']).toBe(`bytes ${png.length - 3}-${png.length - 1}/${png.length}`);

    // Several ranges at once: the whole file, as RFC 9110 allows.
    const several = await get(url, { range: 'bytes=0-1,5-6' });
    expect(several.statusCode).toBe(200);
    expect(several.rawPayload.equals(png)).toBe(true);

    const past = await get(url, { range: `bytes=${png.length}-` });
    expect(past.statusCode).toBe(416);
    expect(past.headers['content-range']).toBe(`bytes */${png.length}`);
    expect(past.json()).toEqual({ error: `Range not satisfiable: the file has ${png.length} bytes`, code: 'range_not_satisfiable' });

    const head = await api.app.inject({ method: 'HEAD', url: pathOf(url) });
    expect(head.statusCode).toBe(200);
    expect(Number(head.headers['content-length'])).toBe(png.length);
    expect(head.headers['content-type']).toBe('image/png');
    expect(head.rawPayload.length).toBe(0);
  });

  it('answers HEAD with the headers GET would give, and no body, without opening the stored file', async () => {
    const id = await uploaded();
    const url = pathOf(signed(id));
    const opened = vi.spyOn(api.media.storage, 'open');
    try {
      const head = await api.app.inject({ method: 'HEAD', url });
      expect([head.statusCode, head.headers['content-type'], head.headers['accept-ranges'], head.headers['cache-control']]).toEqual([
        200,
        'image/png',
        'bytes',
        'private, no-transform',
      ]);
      expect(Number(head.headers['content-length'])).toBe(png.length);
      expect(head.rawPayload.length).toBe(0);

      const ranged = await api.app.inject({ method: 'HEAD', url, headers: { range: 'bytes=0-9' } });
      expect([ranged.statusCode, ranged.headers['content-range'], Number(ranged.headers['content-length'])]).toEqual([206, `bytes 0-9/${png.length}`, 10]);
      expect(ranged.rawPayload.length).toBe(0);
      expect(opened).not.toHaveBeenCalled();

      // GET through the same spy: it does see the store being read.
      expect((await api.app.inject({ method: 'GET', url })).rawPayload.equals(png)).toBe(true);
      expect(opened).toHaveBeenCalledTimes(1);
    } finally {
      opened.mockRestore();
    }
  });

  it('answers 404 Media not found for an expired URL, a changed expiry, another id, a bad signature or a deleted medium', async () => {
    const id = await uploaded();
    const other = await uploaded();
    const url = new URL(signed(id));
    const expired = signed(id, new Date(Date.now() - 1000));
    const laterExpiry = new URL(url);
    laterExpiry.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    const otherId = url.toString().replace(id, other);
    const badSignature = new URL(url);
    badSignature.searchParams.set('signature', 'A'.repeat(43));
    for (const wrong of [expired, laterExpiry.toString(), otherId, badSignature.toString(), url.toString().replace(id, 'med_nothing')]) {
      const res = await get(wrong);
      expect(res.statusCode, wrong).toBe(404);
      expect(res.json()).toEqual({ error: 'Media not found', code: 'media_not_found' });
    }
    await api.db.deleteFrom('media_assets').where('id', '=', id).execute();
    expect((await get(url.toString())).statusCode).toBe(404);
  });

  it('refuses a URL without its signature as an invalid request', async () => {
    const id = await uploaded();
    const res = await api.request<Schemas['Error']>({ method: 'GET', url: `/media/${id}?expires=1` });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'Invalid request', details: [{ path: ['signature'], code: 'invalid_type' }] });
  });

  it('lets crawlers fetch public media and nothing else (robots.txt), with no key', async () => {
    const res = await api.request<string>({ method: 'GET', url: '/robots.txt' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body).toBe('User-agent: *\nAllow: /media/\nDisallow: /\n');
  });
});
