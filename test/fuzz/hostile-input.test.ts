import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { sql } from 'kysely';
import { parse } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { SPEC_PATH } from '../../src/api/contract/specification.js';
import { useTestApi, type ApiRequest, type ApiResponse, type Schemas } from '../support/api.js';
import { account, media, userWithKey, type TestUser } from '../support/fixtures.js';

/**
 * Hostile input on every operation of the spec, generated two ways: bodies, queries and ids drawn
 * from the spec's own schemas, and valid requests broken on purpose (wrong types, huge or deep
 * values, NUL and lone surrogates, prototype keys, duplicate keys, bad percent-encoding, oversized
 * bodies, malformed Authorization). Every answer must be one the spec documents for its operation
 * and status (injectChecked checks it), never a 5xx, never a stack or SQL; and the broken requests,
 * all refused, leave the database as it was.
 */
const api = useTestApi();
const MIN_REQUESTS = 10_000;
let sent = 0;

type Schema = Record<string, unknown>;
interface Operation {
  operationId: string;
  method: ApiRequest['method'];
  path: string;
  keyed: boolean;
  body?: Schema;
  multipart: boolean;
  query: { name: string; schema: Schema }[];
}
const spec = parse(readFileSync(SPEC_PATH, 'utf8')) as {
  paths: Record<string, Record<string, Schema>>;
  components: {
    schemas: Record<string, Schema>;
    parameters: Record<string, Schema>;
  };
  security: unknown[];
};
const deref = <T extends Schema>(node: T): T => {
  const ref = node.$ref as string | undefined;
  if (ref === undefined) return node;
  const [, , group, name] = ref.split('/');
  return deref((spec.components as unknown as Record<string, Record<string, T>>)[group ?? '']?.[name ?? ''] as T);
};
const operations: Operation[] = Object.entries(spec.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, raw]) => {
    const content = ((raw.requestBody as Schema | undefined)?.content ?? {}) as Record<string, { schema: Schema }>;
    const params = ((raw.parameters as Schema[] | undefined) ?? []).map(deref);
    return {
      operationId: raw.operationId as string,
      method: method.toUpperCase() as ApiRequest['method'],
      path,
      keyed: ((raw.security as unknown[] | undefined) ?? spec.security).length > 0,
      body: content['application/json']?.schema,
      multipart: content['multipart/form-data'] !== undefined,
      query: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name as string, schema: p.schema as Schema })),
    };
  }),
);

/** An arbitrary value for a JSON schema of the spec: what it allows, and a little past its bounds. */
function fromSchema(node: Schema, depth = 0): fc.Arbitrary<unknown> {
  const schema = deref(node);
  if (depth > 5) return fc.constant(null);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  for (const key of ['oneOf', 'anyOf'] as const)
    if (Array.isArray(schema[key])) return fc.oneof(...(schema[key] as Schema[]).map((s) => fromSchema(s, depth + 1)));
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string | undefined];
  return fc.oneof(
    ...types.map((type): fc.Arbitrary<unknown> => {
      switch (type) {
        case 'null':
          return fc.constant(null);
        case 'boolean':
          return fc.boolean();
        case 'integer':
        case 'number': {
          const min = typeof schema.minimum === 'number' ? schema.minimum : -1_000_000;
          const max = typeof schema.maximum === 'number' ? schema.maximum : 1_000_000;
          return fc.integer({
            min: Math.max(Number.MIN_SAFE_INTEGER, min - 2),
            max: Math.min(Number.MAX_SAFE_INTEGER, max + 2),
          });
        }
        case 'string':
          if (schema.format === 'date-time')
            return fc
              .date({
                min: new Date('2000-01-01'),
                max: new Date('2100-01-01'),
                noInvalidDate: true,
              })
              .map((d) => d.toISOString());
          return fc.string({
            maxLength: Math.min(typeof schema.maxLength === 'number' ? schema.maxLength + 2 : 40, 60),
            unit: 'grapheme',
          });
        case 'array':
          return fc.array(fromSchema((schema.items as Schema | undefined) ?? {}, depth + 1), {
            maxLength: Math.min(typeof schema.maxItems === 'number' ? schema.maxItems + 1 : 4, 6),
          });
        case 'object': {
          const props = (schema.properties ?? {}) as Record<string, Schema>;
          const required = (schema.required as string[] | undefined) ?? [];
          return fc.record(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, fromSchema(v, depth + 1)])), {
            requiredKeys: required.filter((k) => k in props),
          });
        }
        case undefined:
        default:
          return fc.jsonValue({ maxDepth: 2 });
      }
    }),
  );
}

/** Values that no field of the spec accepts where a string, number or list is wanted. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant('\u0000'),
  fc.constant('a\ud800b'),
  fc.constant('\udfff'),
  fc.constant('x'.repeat(200_000)),
  fc.constant(Number.MAX_SAFE_INTEGER * 4),
  fc.constant(-1e308),
  fc.constant(1.5),
  fc.constant(true),
  fc.constant({}),
  fc.constant([]),
  fc.constant(Array.from({ length: 5000 }, () => 'acc_0')),
  fc.constant(JSON.parse('{"__proto__": {"polluted": true}}') as unknown),
  fc.constant({ constructor: { prototype: { polluted: true } } }),
  fc.constant(Array.from({ length: 200 }).reduce<unknown>((inner) => [inner], 'deep')),
  fc.constant(Array.from({ length: 200 }).reduce<unknown>((inner) => ({ a: inner }), 'deep')),
);
/** Text a client may well send: right-to-left, combining marks, emoji, mixed scripts. */
const oddText = fc.constantFrom('مرحبا بالعالم', 'שלום\u200f עולם', 'e\u0301\u0301\u0301 Z\u0351\u0352\u0353', '👩‍👩‍👧‍👦🏳️‍🌈', '\u202eevil\u202c', 'Ǆ ß ﬁ İ');

let owner: TestUser & {
  account: string;
  media: string;
  post: string;
  webhook: string;
};
/** Every table's row count: the database as a rejected request must leave it. */
async function rowCounts(): Promise<Record<string, number>> {
  const tables = await sql<{
    table_name: string;
  }>`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`.execute(api.db);
  const counts: Record<string, number> = {};
  for (const { table_name } of tables.rows) {
    counts[table_name] =
      (
        await sql<{
          n: number;
        }>`select count(*)::int as n from ${sql.table(table_name)}`.execute(api.db)
      ).rows[0]?.n ?? -1;
  }
  return counts;
}

/** The path with its ids filled: the caller's own, unless given. */
function pathFor(op: Operation, id?: string): string {
  return op.path.replace(
    '{id}',
    () =>
      id ??
      (op.path.includes('webhooks') ? owner.webhook : op.path.includes('accounts') ? owner.account : op.path.includes('media') ? owner.media : owner.post),
  );
}

const LEAK = /\bat [\w.<>]+ \(|node_modules|\/src\/|\bselect\b.+\bfrom\b|\binsert into\b|\bduplicate key\b|\brelation "|syntax error|\bpg_|kysely/i;

async function send(req: ApiRequest): Promise<ApiResponse> {
  sent++;
  const res = await api.request(req);
  expect(res.status, `${req.method} ${req.url.slice(0, 120)}`).toBeLessThan(500);
  const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body ?? '');
  if (!req.url.startsWith('/openapi') && !req.url.startsWith('/docs')) expect(text).not.toMatch(LEAK);
  return res;
}

/** A body sent as is, with this content type, to the operation on the caller's own resource. */
function sendRaw(op: Operation, payload: string, contentType: string): Promise<ApiResponse> {
  return send({ method: op.method, url: pathFor(op), ...(op.keyed ? { key: owner.key } : {}), payload, headers: { 'content-type': contentType } });
}

beforeAll(async () => {
  const user = await userWithKey(api.db, 'fuzz');
  const acc = await account(api.db, user.userId, 'x', 'fuzz');
  const med = await media(api.db, user.userId);
  const post = await api.request<Schemas['PostCreateResult']>({
    method: 'POST',
    url: '/api/v1/posts',
    key: user.key,
    body: { accountIds: [acc], caption: 'base' },
  });
  const hook = await api.request<Schemas['WebhookWithSecret']>({
    method: 'POST',
    url: '/api/v1/webhooks',
    key: user.key,
    body: { url: 'http://127.0.0.1:9/h', eventTypes: ['ping'] },
  });
  owner = {
    ...user,
    account: acc,
    media: med,
    post: post.body.id,
    webhook: hook.body.id,
  };
});

/** Fields a generated body must not carry: they would make the service call out to the network. */
function tame(op: Operation, body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const copy = { ...(body as Record<string, unknown>) };
  if (op.operationId === 'connectAccount') delete copy.credentials;
  if ('url' in copy) copy.url = 'http://127.0.0.1:9/hook';
  return copy;
}

describe('hostile input on every operation', () => {
  it('answers requests generated from the spec with documented answers only, never a 5xx', async () => {
    for (const op of operations) {
      const body = op.body === undefined ? fc.constant(undefined) : fromSchema(op.body).map((b) => tame(op, b));
      const query = fc.record(Object.fromEntries(op.query.map((q) => [q.name, fromSchema(q.schema)])), { requiredKeys: [] });
      await fc.assert(
        fc.asyncProperty(body, query, fc.boolean(), async (b, q, idempotent) => {
          const search = new URLSearchParams(Object.entries(q).map(([k, v]): [string, string] => [k, String(v)])).toString();
          await send({
            method: op.method,
            url: `${pathFor(op)}${search === '' ? '' : `?${search}`}`,
            ...(op.keyed ? { key: owner.key } : {}),
            ...(b === undefined ? {} : { body: b }),
            ...(idempotent ? { headers: { 'idempotency-key': `k-${sent}` } } : {}),
          });
        }),
        { numRuns: 200, seed: 11 },
      );
    }
  }, 300_000);

  it('refuses broken requests on every operation, in the error shape, and keeps nothing from them', async () => {
    const before = await rowCounts();
    const refused = (res: ApiResponse) => expect(res.status).toBeGreaterThanOrEqual(400);
    for (const op of operations) {
      const keyed = op.keyed ? { key: owner.key } : {};
      // A JSON body with one field replaced by a hostile value, or a hostile key added.
      if (op.body !== undefined) {
        const base = deref(op.body);
        const fields = Object.keys(base.properties ?? {});
        await fc.assert(
          fc.asyncProperty(fc.constantFrom(...fields), hostileValue, async (field, value) => {
            refused(
              await send({
                method: op.method,
                url: pathFor(op),
                ...keyed,
                body: { [field]: value },
              }),
            );
          }),
          { numRuns: 200, seed: 12 },
        );
        for (const payload of [
          '{"caption": "a", "caption": "b", "accountIds": []}',
          '{"__proto__": {"isAdmin": true}}',
          '{"constructor": {"prototype": {"x": 1}}}',
          '{',
          '[]',
          'null',
          '"text"',
          '{"a": 1}x',
          `{"caption": "${'x'.repeat(2 * 1024 * 1024)}"}`,
          `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
        ]) {
          refused(await sendRaw(op, payload, 'application/json'));
        }
        refused(await sendRaw(op, 'caption=x', 'application/x-www-form-urlencoded'));
      }
      if (op.multipart) {
        for (const payload of ['', 'not multipart', '--b\r\nContent-Disposition: form-data; name="file"\r\n\r\nabc', '--b--']) {
          refused(await sendRaw(op, payload, 'multipart/form-data; boundary=b'));
        }
      }
      // Query values of every wrong kind.
      for (const q of op.query) {
        for (const value of ['-1', '1e999', 'abc', '%zz', '\u0000', 'x'.repeat(10_000), '1.5', '']) {
          const res = await send({
            method: op.method,
            url: `${pathFor(op)}?${q.name}=${encodeURIComponent(value)}`,
            ...keyed,
            ...(op.body === undefined ? {} : { body: {} }),
          });
          expect(res.status).not.toBe(201);
        }
      }
      if (!op.path.includes('{id}')) continue;
      // Ids of every shape, and malformed percent-encoding, in the path.
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.string({ maxLength: 80, unit: 'binary' }).map(encodeURIComponent),
            fc.constantFrom('%', '%zz', '%E0%A4%A', '%C0%AF', '..%2F..%2Fetc', `post_${'0'.repeat(70_000)}`, '%00', 'acc_%F0%9F%98%80'),
          ),
          async (id) => {
            const res = await send({
              method: op.method,
              url: pathFor(op, id),
              ...keyed,
              ...(op.body === undefined ? {} : { body: {} }),
            });
            expect(res.status).not.toBe(201);
          },
        ),
        { numRuns: 80, seed: 13 },
      );
    }
    expect(await rowCounts()).toEqual(before);
  }, 300_000);

  it('refuses malformed Authorization headers on every keyed operation with 401 and keeps nothing', async () => {
    const before = await rowCounts();
    const authorization = fc.oneof(
      fc.constantFrom(
        '',
        'Bearer',
        'Bearer ',
        'bearer',
        'Basic dXNlcjpwYXNz',
        `Bearer ${owner.key} extra`,
        `Bearer  ${owner.key}x`,
        'Bearer hrld_',
        'Bearer \u0000',
        `Token ${owner.key}`,
      ),
      fc.string({ maxLength: 100, unit: 'grapheme-ascii' }).map((s) => `Bearer ${s}`),
      fc.string({ maxLength: 60, unit: 'grapheme-ascii' }),
    );
    for (const op of operations.filter((o) => o.keyed)) {
      await fc.assert(
        fc.asyncProperty(authorization, async (value) => {
          const res = await send({
            method: op.method,
            url: pathFor(op),
            headers: { authorization: value },
            ...(op.body === undefined ? {} : { body: {} }),
          });
          expect(res.status).toBe(401);
        }),
        { numRuns: 100, seed: 14 },
      );
    }
    expect(await rowCounts()).toEqual(before);
  }, 300_000);

  it('takes text a client may well send (right-to-left, combining marks, emoji) in every text field, without a 5xx', async () => {
    for (const op of operations.filter((o) => o.body !== undefined)) {
      const fields = Object.entries((deref(op.body ?? {}).properties ?? {}) as Record<string, Schema>)
        .filter(([, s]) => deref(s).type === 'string' || (Array.isArray(deref(s).type) && (deref(s).type as string[]).includes('string')))
        .map(([k]) => k);
      if (fields.length === 0) continue;
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...fields), oddText, async (field, text) => {
          await send({
            method: op.method,
            url: pathFor(op),
            key: owner.key,
            body: tame(op, {
              accountIds: [owner.account],
              caption: 'c',
              [field]: text,
            }),
          });
        }),
        { numRuns: 40, seed: 15 },
      );
    }
  }, 300_000);

  it('sent at least 10,000 requests across the operations above', () => {
    // The guarantee is a count: it must not shrink silently as the generators change.
    expect(sent).toBeGreaterThanOrEqual(MIN_REQUESTS);
  });
});
