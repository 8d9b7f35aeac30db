import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { connectAccount } from './accounts.js';
import { createApiKey } from './api-keys.js';
import { addMedia } from './media/add-media.js';
import { createPost } from './posts/create-post.js';
import { createUser } from './users.js';

export interface DemoSeed {
  userId: string;
  accounts: { id: string; platform: string; username: string }[];
  media: { id: string; kind: 'image' | 'video'; mime: string }[];
  key: string;
  keyId: string;
  curl: string;
}

const DEMO_ACCOUNTS = [
  { platform: 'x', username: 'herald_demo', displayName: 'Herald Demo' },
  { platform: 'instagram', username: 'herald.demo', displayName: 'Herald Demo' },
  { platform: 'linkedin', username: 'herald-demo', displayName: 'Herald Demo' },
] as const;

const DEMO_MEDIA = [
  { kind: 'image', mime: 'image/jpeg', bytes: 412_000, width: 1080, height: 1350, durationMs: null },
  { kind: 'video', mime: 'video/mp4', bytes: 18_500_000, width: 1080, height: 1920, durationMs: 30_000 },
] as const;

/** A user with three accounts, two media assets and a key: enough to try every operation at once. */
export async function seedDemo(db: Kysely<Database>, baseUrl: string): Promise<DemoSeed> {
  const { id: userId } = await createUser(db, 'Demo');
  const accounts = [];
  for (const account of DEMO_ACCOUNTS) {
    const { id } = await connectAccount(db, { ...account, owner: { userId } });
    accounts.push({ id, platform: account.platform, username: account.username });
  }
  const media = [];
  for (const facts of DEMO_MEDIA) {
    const { id } = await addMedia(db, userId, facts);
    media.push({ id, kind: facts.kind, mime: facts.mime });
  }
  const { id: keyId, key } = await createApiKey(db, userId, null);
  const curl = `curl -s -H 'Authorization: Bearer ${key}' ${baseUrl}/api/v1/accounts`;
  return { userId, accounts, media, key, keyId, curl };
}

export interface DemoPost {
  postId: string;
  scheduledAt: string;
  curl: string;
}

/** A sandbox post to the demo's accounts, a minute ahead: the in-process worker publishes it while the user watches. */
export async function scheduleDemoPost(db: Kysely<Database>, seed: DemoSeed, baseUrl: string, now: Date): Promise<DemoPost> {
  const scheduledAt = new Date(now.getTime() + 60_000).toISOString();
  const { id } = await createPost(
    db,
    seed.userId,
    {
      accountIds: seed.accounts.filter((a) => a.platform !== 'instagram').map((a) => a.id),
      caption: 'Hello from Herald: this post was scheduled a minute ahead.',
      postType: 'post',
      scheduledAt,
    },
    now,
  );
  return { postId: id, scheduledAt, curl: `curl -s -H 'Authorization: Bearer ${seed.key}' ${baseUrl}/api/v1/posts/${id}` };
}
