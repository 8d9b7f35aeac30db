import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { createBlueskyPublisher, type BlueskyCredentials } from '../../src/adapters/platforms/bluesky/publisher.js';
import { ConnectError, type MediaToPublish, type PartToPublish, type PublishedPart, type PublishOutcome } from '../../src/domain/ports/publisher.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { anyString, stringMatching } from '../support/matchers.js';
import { startTestPds, type TestAccount, type TestPds } from '../support/pds.js';
import { solidPng } from '../support/png.js';
import { unusedPort } from '../support/ports.js';

const png40x30 = solidPng(40, 30);
const png8 = solidPng(8, 8, [0, 0, 255]);

const publisher = createBlueskyPublisher({ fetch, requestTimeoutMs: 15_000 });

let pds: TestPds;
let proxy: FaultProxy;
let accounts = 0;

beforeAll(async () => {
  pds = await startTestPds();
  proxy = await startFaultProxy(pds.url);
}, 180_000);

afterAll(async () => {
  await proxy?.close();
  await pds?.close();
});

afterEach(() => {
  proxy.plan(() => undefined);
  proxy.requests.length = 0;
});

/** A fresh account per test, connected through the publisher, so no test sees another's records. */
async function connected(service?: 'through proxy'): Promise<{ account: TestAccount; credentials: BlueskyCredentials }> {
  accounts += 1;
  const account = await pds.createAccount(`user${accounts}`);
  const { credentials } = await publisher.connect({ service: pds.url, identifier: account.handle, appPassword: account.appPassword });
  return { account, credentials: service === undefined ? credentials : { ...credentials, service: proxy.url } };
}

function parts(texts: string[], media: MediaToPublish[] = []): PartToPublish[] {
  return texts.map((text, index) => ({
    index,
    text,
    media: index === 0 ? media : [],
    material: publisher.newPartMaterial(new Date()),
    published: null,
    progress: null,
  }));
}

function image(bytes: Buffer, fields: Partial<MediaToPublish> = {}): MediaToPublish {
  return {
    id: 'med_1',
    kind: 'image',
    mime: 'image/png',
    bytes: bytes.length,
    width: 40,
    height: 30,
    durationMs: null,
    altText: 'A red rectangle',
    open: () => Promise.resolve(Readable.from([bytes])),
    publicUrl: () => 'https://herald.example/media/med_1',
    ...fields,
  };
}

async function publish(credentials: BlueskyCredentials, toPublish: PartToPublish[]) {
  const refreshed: BlueskyCredentials[] = [];
  const published: [number, PublishedPart][] = [];
  const outcome = await publisher.publish(
    {
      account: { id: 'acc_1', platform: 'bluesky', username: credentials.handle, platformUserId: credentials.did },
      credentials,
      parts: toPublish,
      postType: 'post',
      fields: {},
      firstAttemptAt: new Date(),
      inDoubt: false,
      now: new Date(),
    },
    {
      // The token source, as the engine gives it, for one publication: refresh, store, hand back.
      refreshCredentials: async (refresh) => {
        const next = await refresh(refreshed.at(-1) ?? credentials);
        refreshed.push(next);
        return next;
      },
      partPublished: (index, part) => {
        published.push([index, part]);
        return Promise.resolve();
      },
      partProgressed: () => Promise.resolve(),
    },
  );
  return { outcome, refreshed, published };
}

function publishedParts(outcome: PublishOutcome): PublishedPart[] {
  if (outcome.kind !== 'published') throw new Error(`expected published, got ${JSON.stringify(outcome)}`);
  return outcome.parts;
}

const rkeyOf = (uri: string): string => uri.split('/').at(-1) ?? '';

describe('Bluesky publisher against a real PDS', { timeout: 90_000 }, () => {
  describe('connect', () => {
    test('logs in with the app password and keeps only the session', async () => {
      const account = await pds.createAccount('connector');
      const connectedAccount = await publisher.connect({ service: pds.url, identifier: account.handle, appPassword: account.appPassword });
      expect(connectedAccount).toMatchObject({ platformUserId: account.did, username: 'connector.test', displayName: null });
      expect(connectedAccount.credentials).toEqual({
        service: pds.url,
        did: account.did,
        handle: 'connector.test',
        accessJwt: anyString(),
        refreshJwt: anyString(),
      });
      expect(JSON.stringify(connectedAccount)).not.toContain(account.appPassword);
    });

    test('a wrong app password is invalid credentials', async () => {
      const account = await pds.createAccount('wrongpass');
      const attempt = publisher.connect({ service: pds.url, identifier: account.handle, appPassword: 'aaaa-bbbb-cccc-dddd' });
      await expect(attempt).rejects.toBeInstanceOf(ConnectError);
      await expect(attempt).rejects.toMatchObject({ reason: 'invalid_credentials', message: 'Bluesky refused the identifier or app password' });
    });

    test('a service nobody listens on is unreachable', async () => {
      const port = await unusedPort();
      const attempt = publisher.connect({ service: `http://127.0.0.1:${port}`, identifier: 'a.test', appPassword: 'aaaa-bbbb-cccc-dddd' });
      await expect(attempt).rejects.toMatchObject({ name: 'ConnectError', reason: 'unreachable', message: `127.0.0.1:${port} did not answer (ECONNREFUSED)` });
    });

    test('a service answering 5xx is unreachable', async () => {
      proxy.plan(() => ({ kind: 'answer', status: 503, body: '{"error":"ServiceUnavailable","message":"down for maintenance"}' }));
      const attempt = publisher.connect({ service: proxy.url, identifier: 'a.test', appPassword: 'aaaa-bbbb-cccc-dddd' });
      await expect(attempt).rejects.toMatchObject({ reason: 'unreachable', message: stringMatching(/answered 503: down for maintenance$/) });
    });

    test("a URL the SSRF guard refuses is url_not_allowed with the guard's message, never invalid credentials", async () => {
      const guard = Object.assign(new Error('10.0.0.5 is a private address'), { name: 'UrlNotAllowedError' });
      const guarded = createBlueskyPublisher({ fetch: () => Promise.reject(guard) });
      const attempt = guarded.connect({ service: 'https://10.0.0.5', identifier: 'a.test', appPassword: 'aaaa-bbbb-cccc-dddd' });
      await expect(attempt).rejects.toMatchObject({ reason: 'url_not_allowed', message: '10.0.0.5 is a private address' });
    });
  });

  describe('publish', () => {
    test('a post with an image, a link, a hashtag and mentions reads back as sent', async () => {
      const { account, credentials } = await connected();
      const friend = await pds.createAccount('carol');
      const text = 'Héllo ✨ https://example.com/x #herald @carol.test @nobody.test';
      const toPublish = parts([text], [image(png40x30)]);
      const { outcome, published } = await publish(credentials, toPublish);

      const rkey = toPublish[0]!.material.key;
      const record = await pds.getRecord(account.did, rkey);
      expect(record).not.toBeNull();
      expect(publishedParts(outcome)).toEqual([
        { platformPostId: record!.uri, url: `https://bsky.app/profile/${account.handle}/post/${rkey}`, cid: record!.cid },
      ]);
      expect(record!.uri).toBe(`at://${account.did}/app.bsky.feed.post/${rkey}`);
      expect(published).toEqual([[0, publishedParts(outcome)[0]]]);

      const bytes = (s: string): number => Buffer.byteLength(s);
      const linkStart = bytes('Héllo ✨ ');
      const tagStart = bytes('Héllo ✨ https://example.com/x ');
      const mentionStart = bytes('Héllo ✨ https://example.com/x #herald ');
      expect(record!.value).toMatchObject({ $type: 'app.bsky.feed.post', text, createdAt: toPublish[0]!.material.createdAt });
      // @nobody.test resolves to no one: it stays plain text, with no facet.
      // RichText types some facets and not others: the facet-level $type is optional, so it is left out here.
      const facets = (record!.value.facets as { $type?: string }[]).map(({ $type: _type, ...facet }) => facet);
      expect(facets).toEqual([
        {
          index: { byteStart: linkStart, byteEnd: linkStart + bytes('https://example.com/x') },
          features: [{ $type: 'app.bsky.richtext.facet#link', uri: 'https://example.com/x' }],
        },
        { index: { byteStart: tagStart, byteEnd: tagStart + bytes('#herald') }, features: [{ $type: 'app.bsky.richtext.facet#tag', tag: 'herald' }] },
        {
          index: { byteStart: mentionStart, byteEnd: mentionStart + bytes('@carol.test') },
          features: [{ $type: 'app.bsky.richtext.facet#mention', did: friend.did }],
        },
      ]);

      const embed = record!.value.embed as {
        $type: string;
        images: { image: { ref: { $link: string }; mimeType: string; size: number }; alt: string; aspectRatio: unknown }[];
      };
      expect(embed).toMatchObject({
        $type: 'app.bsky.embed.images',
        images: [{ image: { mimeType: 'image/png', size: png40x30.length }, alt: 'A red rectangle', aspectRatio: { width: 40, height: 30 } }],
      });
      expect(await pds.getBlob(account.did, embed.images[0]!.image.ref.$link)).toEqual(png40x30);
    });

    test('an image without alt text or size gets an empty alt and no aspect ratio', async () => {
      const { account, credentials } = await connected();
      const toPublish = parts([''], [image(png8, { altText: null, width: null, height: null })]);
      publishedParts((await publish(credentials, toPublish)).outcome);
      const record = await pds.getRecord(account.did, toPublish[0]!.material.key);
      expect((record!.value.embed as { images: unknown[] }).images).toEqual([
        { image: expect.objectContaining({ mimeType: 'image/png' }) as unknown, alt: '' },
      ]);
    });

    test('a thread and its first comment chain as replies to the root and to the part before', async () => {
      const { account, credentials } = await connected();
      const toPublish = parts(['1/3 the root', '2/3', '3/3', 'First comment']);
      const { outcome, published } = await publish(credentials, toPublish);
      const result = publishedParts(outcome);
      expect(result).toHaveLength(4);
      expect(published.map(([index]) => index)).toEqual([0, 1, 2, 3]);

      const records = await Promise.all(toPublish.map((part) => pds.getRecord(account.did, part.material.key)));
      const refs = records.map((r) => ({ uri: r!.uri, cid: r!.cid }));
      expect(records[0]!.value.reply).toBeUndefined();
      for (const i of [1, 2, 3]) {
        expect(records[i]!.value).toMatchObject({ text: toPublish[i]!.text, reply: { root: refs[0], parent: refs[i - 1] } });
      }
      expect(result.map((p) => ({ uri: p.platformPostId, cid: p.cid }))).toEqual(refs);
    });

    test('publishing the same parts twice leaves one record per part', async () => {
      const { account, credentials } = await connected();
      const toPublish = parts(['Once only', 'and its reply'], [image(png8, { width: 8, height: 8 })]);
      const first = publishedParts((await publish(credentials, toPublish)).outcome);
      const second = publishedParts((await publish(credentials, toPublish)).outcome);
      expect(second).toEqual(first);
      const records = await pds.listRecords(account.did);
      expect(records.map((r) => rkeyOf(r.uri)).sort()).toEqual(toPublish.map((p) => p.material.key).sort());
    });

    test('a part published by an earlier attempt is not written again and is the parent of the next', async () => {
      const { account, credentials } = await connected('through proxy');
      const [root, reply] = parts(['The root', 'The reply']);
      const [rootPart] = publishedParts((await publish(credentials, [root!])).outcome);
      proxy.requests.length = 0;

      const { outcome, published } = await publish(credentials, [{ ...root!, published: rootPart! }, reply!]);
      expect(publishedParts(outcome)[0]).toEqual(rootPart);
      expect(published.map(([index]) => index)).toEqual([1]);
      expect(proxy.requests.filter((r) => r.path === '/xrpc/com.atproto.repo.putRecord')).toHaveLength(1);
      const replyRecord = await pds.getRecord(account.did, reply!.material.key);
      const ref = { uri: rootPart!.platformPostId, cid: rootPart!.cid };
      expect(replyRecord!.value.reply).toEqual({ root: ref, parent: ref });
      expect(await pds.listRecords(account.did)).toHaveLength(2);
    });

    test('a record already at the rkey with other bytes is taken as the published part', async () => {
      const { account, credentials } = await connected();
      const [part] = parts(['As first sent']);
      const [first] = publishedParts((await publish(credentials, [part!])).outcome);
      const { outcome } = await publish(credentials, [{ ...part!, text: 'As sent again, changed' }]);
      expect(publishedParts(outcome)).toEqual([first]);
      const records = await pds.listRecords(account.did);
      expect(records.map((r) => r.value.text)).toEqual(['As first sent']);
    });

    test('a video is refused before anything is written', async () => {
      const { account, credentials } = await connected();
      // Refused on its kind, before its bytes are read: any bytes do.
      const video = image(Buffer.from('not really an mp4'), { kind: 'video', mime: 'video/mp4', durationMs: 2000 });
      const { outcome } = await publish(credentials, parts(['With a video'], [video]));
      expect(outcome).toEqual({
        kind: 'failed',
        category: 'media_error',
        message: 'Publishing a video to Bluesky is not supported yet',
        retryable: false,
        retryAfter: null,
        mayHaveCommitted: false,
        credentialsRevoked: false,
      });
      expect(await pds.listRecords(account.did)).toEqual([]);
    });

    test("text over 300 graphemes is the user's to fix, with the platform's message", async () => {
      const { account, credentials } = await connected();
      const { outcome } = await publish(credentials, parts(['a'.repeat(301)]));
      expect(outcome).toEqual({
        kind: 'failed',
        category: 'user_content',
        message: stringMatching(/grapheme too big \(maximum 300, got 301\)/),
        retryable: false,
        retryAfter: null,
        mayHaveCommitted: false,
        credentialsRevoked: false,
      });
      expect(await pds.listRecords(account.did)).toEqual([]);
    });
  });

  describe('tokens', () => {
    test.each([
      ['an expired', (account: TestAccount) => pds.expiredAccessJwt(account.did)],
      ['a garbage', () => 'not-a-token'],
    ])('%s access token is refreshed once, stored, and the post published', async (_kind, accessJwt) => {
      const { account, credentials } = await connected();
      const stale = { ...credentials, accessJwt: accessJwt(account) };
      const { outcome, refreshed } = await publish(stale, parts(['After a refresh']));
      expect(publishedParts(outcome)).toHaveLength(1);
      expect(refreshed).toHaveLength(1);
      const next = refreshed[0]!;
      expect(next).toMatchObject({ service: pds.url, did: account.did, handle: account.handle });
      expect(next.accessJwt).not.toBe(stale.accessJwt);
      expect(next.refreshJwt).not.toBe(credentials.refreshJwt);

      // The stored session works on its own: the next publish needs no refresh.
      const again = await publish(next, parts(['With the new tokens']));
      expect(publishedParts(again.outcome)).toHaveLength(1);
      expect(again.refreshed).toEqual([]);
    });

    test.each([
      ['a revoked', async (c: BlueskyCredentials) => (await pds.revokeSession(c.refreshJwt), c.refreshJwt)],
      ['a garbage', () => Promise.resolve('not-a-token')],
    ])('%s refresh token needs a reconnect', async (_kind, refreshJwt) => {
      const { account, credentials } = await connected();
      const dead = { ...credentials, accessJwt: 'not-a-token', refreshJwt: await refreshJwt(credentials) };
      const { outcome, refreshed } = await publish(dead, parts(['Never posted']));
      expect(outcome).toMatchObject({ kind: 'failed', category: 'auth_expired', retryable: false, credentialsRevoked: true, mayHaveCommitted: false });
      expect(JSON.stringify(outcome)).not.toContain('not-a-token');
      expect(refreshed).toEqual([]);
      expect(await pds.listRecords(account.did)).toEqual([]);
    });

    test('a refresh that meets a server error is retried later, the session kept', async () => {
      const { credentials } = await connected('through proxy');
      proxy.plan(({ path }) =>
        path === '/xrpc/com.atproto.server.refreshSession' ? { kind: 'answer', status: 503, body: '{"error":"Unavailable","message":"try later"}' } : undefined,
      );
      const { outcome, refreshed } = await publish({ ...credentials, accessJwt: 'not-a-token' }, parts(['Later']));
      expect(outcome).toMatchObject({ kind: 'failed', category: 'platform_error', retryable: true, credentialsRevoked: false, mayHaveCommitted: false });
      expect(refreshed).toEqual([]);
    });
  });

  describe('failures', () => {
    test('a 429 is rate limited until its RateLimit-Reset', async () => {
      const { account, credentials } = await connected('through proxy');
      const reset = Math.floor(Date.now() / 1000) + 600;
      proxy.plan(({ path }) =>
        path === '/xrpc/com.atproto.repo.putRecord'
          ? {
              kind: 'answer',
              status: 429,
              headers: { 'ratelimit-reset': String(reset), 'ratelimit-remaining': '0' },
              body: '{"error":"RateLimitExceeded","message":"Rate Limit Exceeded"}',
            }
          : undefined,
      );
      const { outcome } = await publish(credentials, parts(['Too fast']));
      expect(outcome).toEqual({
        kind: 'failed',
        category: 'rate_limited',
        message: 'Rate Limit Exceeded',
        retryable: true,
        retryAfter: new Date(reset * 1000),
        mayHaveCommitted: false,
        credentialsRevoked: false,
      });
      expect(await pds.listRecords(account.did)).toEqual([]);
    });

    test('a 429 with only Retry-After waits that long', async () => {
      const { credentials } = await connected('through proxy');
      proxy.plan(({ path }) =>
        path === '/xrpc/com.atproto.repo.putRecord' ? { kind: 'answer', status: 429, headers: { 'retry-after': '120' }, body: '' } : undefined,
      );
      const before = Date.now();
      const { outcome } = await publish(credentials, parts(['Too fast']));
      expect(outcome).toMatchObject({ kind: 'failed', category: 'rate_limited', retryable: true });
      const retryAfter = (outcome as { retryAfter: Date }).retryAfter.getTime();
      expect(retryAfter).toBeGreaterThanOrEqual(before + 120_000);
      expect(retryAfter).toBeLessThanOrEqual(Date.now() + 120_000);
    });

    test.each([
      ['a 502 after the write', { kind: 'commitThenAnswer', status: 502, body: '<html>Bad Gateway</html>' } as const, 'answered 502'],
      ['a connection cut after the write', { kind: 'commitThenDestroy' } as const, 'did not answer'],
    ])('%s may have committed; publishing again leaves one record', async (_kind, fault, message) => {
      const { account, credentials } = await connected('through proxy');
      const toPublish = parts(['Did it post?']);
      proxy.plan(({ path }) => (path === '/xrpc/com.atproto.repo.putRecord' ? fault : undefined));
      const { outcome, published } = await publish(credentials, toPublish);
      expect(outcome).toMatchObject({ kind: 'failed', category: 'platform_error', retryable: true, mayHaveCommitted: true, credentialsRevoked: false });
      expect((outcome as { message: string }).message).toContain(message);
      expect(published).toEqual([]);
      expect(await pds.listRecords(account.did)).toHaveLength(1);

      proxy.plan(() => undefined);
      const again = await publish(credentials, toPublish);
      const [part] = publishedParts(again.outcome);
      const records = await pds.listRecords(account.did);
      expect(records.map((r) => r.uri)).toEqual([part!.platformPostId]);
    });

    test('a thread that fails midway reports the parts it published, and the next attempt goes on from there', async () => {
      const { account, credentials } = await connected('through proxy');
      const toPublish = parts(['one', 'two', 'three']);
      let writes = 0;
      proxy.plan(({ path }) => {
        if (path !== '/xrpc/com.atproto.repo.putRecord') return undefined;
        writes += 1;
        return writes === 2 ? { kind: 'answer', status: 503, body: '{"error":"Unavailable","message":"Service Unavailable"}' } : undefined;
      });
      const first = await publish(credentials, toPublish);
      expect(first.outcome).toMatchObject({ kind: 'failed', category: 'platform_error', retryable: true, mayHaveCommitted: true });
      expect(first.published.map(([index]) => index)).toEqual([0]);

      const resumed = toPublish.map((part) => ({ ...part, published: first.published.find(([index]) => index === part.index)?.[1] ?? null }));
      const second = await publish(credentials, resumed);
      expect(second.published.map(([index]) => index)).toEqual([1, 2]);
      const records = await Promise.all(toPublish.map((part) => pds.getRecord(account.did, part.material.key)));
      const root = { uri: records[0]!.uri, cid: records[0]!.cid };
      expect(records.map((r) => r!.value.reply)).toEqual([undefined, { root, parent: root }, { root, parent: { uri: records[1]!.uri, cid: records[1]!.cid } }]);
      expect(await pds.listRecords(account.did)).toHaveLength(3);
    });

    test('a server error on the image upload is retried and nothing was written', async () => {
      const { account, credentials } = await connected('through proxy');
      proxy.plan(({ path }) =>
        path === '/xrpc/com.atproto.repo.uploadBlob'
          ? { kind: 'answer', status: 500, body: '{"error":"InternalServerError","message":"Internal Server Error"}' }
          : undefined,
      );
      const { outcome } = await publish(credentials, parts(['With an image'], [image(png8, { width: 8, height: 8 })]));
      expect(outcome).toEqual({
        kind: 'failed',
        category: 'platform_error',
        message: 'Internal Server Error',
        retryable: true,
        retryAfter: null,
        mayHaveCommitted: false,
        credentialsRevoked: false,
      });
      expect(proxy.requests.map((r) => r.path)).not.toContain('/xrpc/com.atproto.repo.putRecord');
      expect(await pds.listRecords(account.did)).toEqual([]);
    });

    test('an image the PDS refuses as too large is a media error', async () => {
      const { credentials } = await connected('through proxy');
      proxy.plan(({ path }) =>
        path === '/xrpc/com.atproto.repo.uploadBlob'
          ? { kind: 'answer', status: 413, body: '{"error":"BlobTooLarge","message":"This file is too large"}' }
          : undefined,
      );
      const { outcome } = await publish(credentials, parts([''], [image(png8)]));
      expect(outcome).toMatchObject({ kind: 'failed', category: 'media_error', message: 'This file is too large', retryable: false });
    });
  });
});
