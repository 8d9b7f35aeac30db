import { describe, expect, it } from 'vitest';
import { connectAccount, disconnectAccount } from '../../src/domain/accounts.js';
import { addMember, createOrganization } from '../../src/domain/users.js';
import { useTestApi, type Schemas } from '../support/api.js';
import { account, userWithKey } from '../support/fixtures.js';

const api = useTestApi();

describe('GET /api/v1/accounts', () => {
  it("lists the caller's own active accounts and those of their organizations, nobody else's", async () => {
    const ada = await userWithKey(api.db, 'Ada');
    const bob = await userWithKey(api.db, 'Bob');
    const own = await connectAccount(api.db, { platform: 'x', username: 'ada', displayName: 'Ada L.', owner: { userId: ada.userId } });
    await account(api.db, bob.userId, 'instagram', 'bob');
    const { id: orgId } = await createOrganization(api.db, 'Acme');
    await addMember(api.db, orgId, ada.userId);
    const shared = await connectAccount(api.db, { platform: 'linkedin', username: 'acme', displayName: null, owner: { orgId } });
    const gone = await account(api.db, ada.userId, 'x', 'old');
    await disconnectAccount(api.db, gone, new Date());

    const res = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: ada.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [
        { id: own.id, platform: 'x', username: 'ada', displayName: 'Ada L.' },
        { id: shared.id, platform: 'linkedin', username: 'acme', displayName: null },
      ],
    });

    const bobs = await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: bob.key });
    expect(bobs.body.data.map((a) => a.username)).toEqual(['bob']);
  });

  it('answers an empty list for a user without accounts', async () => {
    const lone = await userWithKey(api.db);
    const res = await api.request({ method: 'GET', url: '/api/v1/accounts', key: lone.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [] });
  });
});
