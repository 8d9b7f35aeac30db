import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/schema.js';
import { connectAccount, disconnectAccount } from '../../src/domain/accounts.js';
import { createApiKey, revokeKey } from '../../src/domain/api-keys.js';
import { DomainError } from '../../src/domain/errors.js';
import { addMedia } from '../../src/domain/media/add-media.js';
import { addMember, createOrganization, createUser } from '../../src/domain/users.js';
import { createCredentialVault } from '../../src/adapters/secrets/credential-vault.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { JPEG_4_5 } from '../support/fixtures.js';

// What the operator CLI calls: text it would store follows the storable-text rule, and an id that
// cannot exist (one holding NUL, say) is not found, never sent to the database to fail there.

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.close();
});

async function rows(table: keyof Database): Promise<number> {
  return (await database.db.selectFrom(table).selectAll().execute()).length;
}

/** Every table's row count, to show a refused call wrote nothing. */
async function counts(): Promise<number[]> {
  return Promise.all((['users', 'organizations', 'memberships', 'api_keys', 'accounts', 'media_assets'] as const).map(rows));
}

/** `call` runs only once the counts are taken, so its rejection is always awaited. */
async function expectRefused(call: () => Promise<unknown>, kind: DomainError['kind'], message: string): Promise<void> {
  const before = await counts();
  const err: unknown = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  expect(err).toMatchObject({ kind, message });
  expect(await counts()).toEqual(before);
}

describe('text from the operator', () => {
  it('refuses NUL and unpaired surrogates in names, usernames and display names, naming the first one', async () => {
    const { id: userId } = await createUser(database.db, 'Ada');
    const rule = 'must not contain U+0000 (NUL) or an unpaired UTF-16 surrogate';
    await expectRefused(() => createUser(database.db, 'A\u0000da'), 'invalid_request', `User name ${rule}; got U+0000 at index 1`);
    await expectRefused(() => createOrganization(database.db, 'Acme \ud800'), 'invalid_request', `Organization name ${rule}; got U+D800 at index 5`);
    const account = { platform: 'x', displayName: null, owner: { userId } };
    await expectRefused(() => connectAccount(database.db, { ...account, username: '\udc00ada' }), 'invalid_request', `Username ${rule}; got U+DC00 at index 0`);
    await expectRefused(
      () => connectAccount(database.db, { ...account, username: 'ada', displayName: 'Ada\u0000' }),
      'invalid_request',
      `Display name ${rule}; got U+0000 at index 3`,
    );
  });

  it('stores emoji and other astral characters as given', async () => {
    const { id: orgId } = await createOrganization(database.db, 'Launch \u{1F680}');
    const stored = await database.db.selectFrom('organizations').select('name').where('id', '=', orgId).executeTakeFirstOrThrow();
    expect(stored.name).toBe('Launch \u{1F680}');
  });
});

describe('ids from the operator that cannot exist', () => {
  it('are not found, whatever they hold', async () => {
    const { id: userId } = await createUser(database.db, 'Ada');
    const { id: orgId } = await createOrganization(database.db, 'Acme');
    const account = { platform: 'x', username: 'ada', displayName: null };
    await expectRefused(() => createApiKey(database.db, 'usr_\u0000', null), 'not_found', 'User not found: usr_\u0000');
    await expectRefused(() => revokeKey(database.db, 'key_\u0000', new Date()), 'not_found', 'API key not found: key_\u0000');
    await expectRefused(() => addMember(database.db, orgId, '\u0000'), 'not_found', 'User not found: \u0000');
    await expectRefused(() => addMember(database.db, 'org_\ud800', userId), 'not_found', 'Organization not found: org_\ud800');
    await expectRefused(() => connectAccount(database.db, { ...account, owner: { userId: 'usr_\u0000' } }), 'not_found', 'User not found: usr_\u0000');
    await expectRefused(() => connectAccount(database.db, { ...account, owner: { orgId: '\u0000' } }), 'not_found', 'Organization not found: \u0000');
    await expectRefused(
      () =>
        disconnectAccount(
          { db: database.db, vault: createCredentialVault(Buffer.alloc(32)), oauth: {}, instanceOAuth: {}, callbackUrl: '', log: { info() {}, error() {} } },
          'acc_\u0000',
          new Date(),
        ),
      'not_found',
      'Account not found: acc_\u0000',
    );
    await expectRefused(() => addMedia(database.db, 'usr_\u0000', JPEG_4_5), 'not_found', 'User not found: usr_\u0000');
  });
});
