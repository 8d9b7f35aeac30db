import { describe, expect, it } from 'vitest';
import { connectAccount } from '../../src/domain/accounts.js';
import { addMember, createOrganization, removeMember } from '../../src/domain/users.js';
import { useTestApi, type Schemas } from '../support/api.js';
import { account, userWithKey, type TestUser } from '../support/fixtures.js';
import { createPost, postDetail } from '../support/posts.js';
import { useTestReceiver } from '../support/webhook-receiver.js';

// Removing a member is what `herald org remove-member` does (test/cli/herald-cli.test.ts runs the command itself).

const api = useTestApi();
const receiver = useTestReceiver();

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const LOST_ACCESS = { category: 'auth_expired', message: "The post's owner no longer has access to this account", retrying: false };

function inMs(ms: number): string {
  return new Date(Date.now() + ms).toISOString();
}

/** What the sandbox "platform" received for an account: the outbox, not the post's own rows. */
async function outbox(accountId: string): Promise<string[]> {
  return (await api.db.selectFrom('sandbox_outbox').select('text').where('account_id', '=', accountId).orderBy('created_at').execute()).map((r) => r.text);
}

/** An organization with an owner, a plain member, and a sandbox account of its own. */
async function organization(): Promise<{ orgId: string; owner: TestUser; member: TestUser; orgAccount: string }> {
  const owner = await userWithKey(api.db, 'Owner');
  const member = await userWithKey(api.db, 'Member');
  const { id: orgId } = await createOrganization(api.db, 'Acme', owner.userId);
  await addMember(api.db, orgId, member.userId);
  const orgAccount = (await connectAccount(api.db, { platform: 'linkedin', username: 'acme', displayName: null, owner: { orgId } })).id;
  return { orgId, owner, member, orgAccount };
}

async function accountIds(u: TestUser): Promise<string[]> {
  return (await api.request<Schemas['AccountList']>({ method: 'GET', url: '/api/v1/accounts', key: u.key })).body.data.map((a) => a.id);
}

describe("a removed member's posts on the organization's accounts", () => {
  it("fail auth_expired when they come due, and nothing is published there; the member's own account still gets its target", async () => {
    const { orgId, member, orgAccount } = await organization();
    const own = await account(api.db, member.userId, 'x', 'member');
    const id = await createPost(api, member, { accountIds: [own, orgAccount], caption: 'Quarterly results', scheduledAt: inMs(MINUTE) });

    await removeMember(api.db, orgId, member.userId);
    api.publishing.runAhead(2 * MINUTE);
    await api.publishing.drain();

    const post = await postDetail(api, member, id);
    expect(post.status).toBe('partial');
    expect(post.targets.map((t) => [t.accountId, t.status])).toEqual([
      [own, 'published'],
      [orgAccount, 'failed'],
    ]);
    expect(post.targets[1]).toMatchObject({ platformPostId: null, url: null, error: LOST_ACCESS });
    expect(await outbox(orgAccount)).toEqual([]);
    expect(await outbox(own)).toEqual(['Quarterly results']);
    expect(await accountIds(member)).toEqual([own]);
  });

  it('fail at once when published now: the answer shows it, the events say it, and a worker publishes nothing', async () => {
    const { orgId, member, orgAccount } = await organization();
    const hook = await api.request<Schemas['WebhookWithSecret']>({
      method: 'POST',
      url: '/api/v1/webhooks',
      key: member.key,
      body: { url: receiver.url, eventTypes: ['target.failed', 'post.failed'] },
    });
    expect(hook.status).toBe(201);
    const draft = await createPost(api, member, { accountIds: [orgAccount], caption: 'Draft for Acme' });

    await removeMember(api.db, orgId, member.userId);
    const from = receiver.received.length;
    const res = await api.request<Schemas['PostDetail']>({ method: 'POST', url: `/api/v1/posts/${draft}/publish`, key: member.key });
    expect(res.status).toBe(202);
    expect(res.body.status).toBe('failed');
    expect(res.body.targets).toMatchObject([{ accountId: orgAccount, status: 'failed', platformPostId: null, error: LOST_ACCESS }]);

    api.publishing.runAhead(MINUTE);
    await api.publishing.drain();
    await api.publishing.deliverAll();
    api.publishing.runAhead(0);
    expect(await postDetail(api, member, draft)).toEqual(res.body);
    expect(await outbox(orgAccount)).toEqual([]);
    const events = receiver.received.slice(from).map((r) => r.json as { type: string; data: { target?: Schemas['PostTarget']; status?: string } });
    expect(events.map((e) => e.type).sort()).toEqual(['post.failed', 'target.failed']);
    expect(events.find((e) => e.type === 'target.failed')?.data.target).toMatchObject({ accountId: orgAccount, error: LOST_ACCESS });
  });

  it('fail again at once when retried, and a worker publishes nothing, until the member is added back', async () => {
    const { orgId, member, orgAccount } = await organization();
    const id = await createPost(api, member, { accountIds: [orgAccount], caption: 'Late for Acme', scheduledAt: inMs(MINUTE) });
    // The service was "down" past the lateness bound: the target fails, retryable by hand.
    api.publishing.runAhead(2 * HOUR);
    await api.publishing.drain();
    expect((await postDetail(api, member, id)).targets[0]?.error?.category).toBe('system_error');

    await removeMember(api.db, orgId, member.userId);
    const res = await api.request<Schemas['PostDetail']>({ method: 'POST', url: `/api/v1/posts/${id}/retry`, key: member.key });
    expect(res.status).toBe(202);
    expect(res.body.status).toBe('failed');
    expect(res.body.targets).toMatchObject([{ status: 'failed', error: LOST_ACCESS }]);

    await api.publishing.drain();
    expect(await postDetail(api, member, id)).toEqual(res.body);
    expect(await outbox(orgAccount)).toEqual([]);

    // Access is judged against the memberships of the moment, not marked on the post at the removal.
    await addMember(api.db, orgId, member.userId);
    expect((await api.request({ method: 'POST', url: `/api/v1/posts/${id}/retry`, key: member.key })).status).toBe(202);
    await api.publishing.drain();
    api.publishing.runAhead(0);
    expect((await postDetail(api, member, id)).status).toBe('published');
    expect(await outbox(orgAccount)).toEqual(['Late for Acme']);
  });
});

describe("disconnecting an organization's account", () => {
  it('is refused to a plain member (403), whose posts keep going out there, and done by an owner', async () => {
    const { owner, member, orgAccount } = await organization();
    const own = await account(api.db, member.userId);
    const res = await api.request<Schemas['Error']>({ method: 'DELETE', url: `/api/v1/accounts/${orgAccount}`, key: member.key });
    expect(res).toMatchObject({ status: 403, body: { error: "Only an owner of the account's organization can disconnect it" } });

    expect(await accountIds(member)).toEqual([orgAccount, own]);
    expect(await accountIds(owner)).toEqual([orgAccount]);
    const id = await createPost(api, member, { accountIds: [orgAccount], caption: 'Still connected', scheduledAt: inMs(MINUTE) });
    api.publishing.runAhead(2 * MINUTE);
    await api.publishing.drain();
    api.publishing.runAhead(0);
    expect((await postDetail(api, member, id)).status).toBe('published');
    expect(await outbox(orgAccount)).toEqual(['Still connected']);

    // A plain member's own account is still theirs to disconnect; the organization's is an owner's.
    expect(await api.request({ method: 'DELETE', url: `/api/v1/accounts/${own}`, key: member.key })).toMatchObject({ status: 200, body: { success: true } });
    expect(await api.request({ method: 'DELETE', url: `/api/v1/accounts/${orgAccount}`, key: owner.key })).toMatchObject({
      status: 200,
      body: { success: true },
    });
    expect(await accountIds(member)).toEqual([]);
    expect(await accountIds(owner)).toEqual([]);
  });

  it('is done by a member made an owner later, and is not found for someone outside the organization', async () => {
    const { orgId, member, orgAccount } = await organization();
    const outsider = await userWithKey(api.db);
    expect(await api.request({ method: 'DELETE', url: `/api/v1/accounts/${orgAccount}`, key: outsider.key })).toMatchObject({
      status: 404,
      body: { error: 'Account not found' },
    });
    expect((await api.request({ method: 'DELETE', url: `/api/v1/accounts/${orgAccount}`, key: member.key })).status).toBe(403);
    expect(await addMember(api.db, orgId, member.userId, true)).toEqual({ orgId, userId: member.userId, role: 'owner' });
    expect(await api.request({ method: 'DELETE', url: `/api/v1/accounts/${orgAccount}`, key: member.key })).toMatchObject({
      status: 200,
      body: { success: true },
    });
  });
});
