import { describe, expect, it } from 'vitest';
import { useTestApi } from '../support/api.js';
import { account, inOneHour, media, userWithKey } from '../support/fixtures.js';

// createPost and deleteMedia on the same media at the same moment, really side by side on two connections.

const api = useTestApi();

const ROUNDS = 40;

describe('createPost racing deleteMedia for the same media', () => {
  it('never fails with a 500 and always leaves a state one of the two orders would give', async () => {
    const u = await userWithKey(api.db);
    const acc = await account(api.db, u.userId);
    for (let round = 0; round < ROUNDS; round++) {
      const image = await media(api.db, u.userId);
      // A scheduled post keeps its media (the delete is refused); a draft loses it (the delete wins).
      const scheduled = round % 2 === 0;
      const body = { accountIds: [acc], caption: `round ${round}`, mediaIds: [image], ...(scheduled ? { scheduledAt: inOneHour() } : {}) };
      const [created, deleted] = await Promise.all([
        api.request<{ id: string }>({ method: 'POST', url: '/api/v1/posts', key: u.key, body }),
        api.request({ method: 'DELETE', url: `/api/v1/media/${image}`, key: u.key }),
      ]);
      const mediaLeft = await api.db.selectFrom('media_assets').select('id').where('id', '=', image).execute();
      const attached = await api.db.selectFrom('post_media').select('post_id').where('media_id', '=', image).execute();

      if (created.status === 403) {
        // The delete came first: the post was refused and nothing of it was written.
        expect(created.body).toEqual({ error: `Media not accessible: ${image}`, code: 'not_accessible' });
        expect(deleted.status).toBe(200);
        expect(mediaLeft).toEqual([]);
        expect(await api.db.selectFrom('posts').select('id').where('caption', '=', `round ${round}`).execute()).toEqual([]);
        continue;
      }
      // The post came first: it holds the media until the delete decides.
      expect(created.status).toBe(201);
      if (scheduled) {
        expect(deleted.status).toBe(400);
        expect(deleted.body).toEqual({ error: 'Cannot delete media used by a scheduled or published post', code: 'media_in_use' });
        expect(mediaLeft).toEqual([{ id: image }]);
        expect(attached).toEqual([{ post_id: created.body.id }]);
      } else {
        expect(deleted.status).toBe(200);
        expect(mediaLeft).toEqual([]);
        expect(attached).toEqual([]);
      }
    }
  });
});
