import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Schemas, TestApi } from './api.js';
import type { TestUser } from './fixtures.js';
import { multipartBody } from './media-files.js';

/** Calls to the posts API that the publishing tests make again and again, each checked against the spec. */

export async function createPost(api: TestApi, u: TestUser, body: Record<string, unknown>): Promise<string> {
  const res = await api.request<{ id: string }>({ method: 'POST', url: '/api/v1/posts', key: u.key, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

/** Creates the post and publishes it now: due at once for the next drain. */
export async function publishNow(api: TestApi, u: TestUser, body: Record<string, unknown>): Promise<string> {
  const id = await createPost(api, u, body);
  expect((await api.request({ method: 'POST', url: `/api/v1/posts/${id}/publish`, key: u.key })).status).toBe(202);
  return id;
}

export async function postDetail(api: TestApi, u: TestUser, id: string): Promise<Schemas['PostDetail']> {
  const res = await api.request<Schemas['PostDetail']>({ method: 'GET', url: `/api/v1/posts/${id}`, key: u.key });
  expect(res.status).toBe(200);
  return res.body;
}

/** Uploads a file with its alt text through the API, as a client does; the medium's id. */
export async function uploadMedia(api: TestApi, u: TestUser, file: Buffer, name: string, type: string, altText: string): Promise<string> {
  const { payload, contentType } = multipartBody([
    { name: 'file', value: file, filename: name, type },
    { name: 'altText', value: altText },
  ]);
  const res = await api.request<Schemas['Media']>({ method: 'POST', url: '/api/v1/media', key: u.key, payload, headers: { 'content-type': contentType } });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** Deletes a medium's stored file behind Herald's back: its public URL then answers 404, as a platform fetching it would find. */
export async function loseStoredFile(api: TestApi, mediaId: string): Promise<void> {
  const row = await api.db.selectFrom('media_assets').select('storage_key').where('id', '=', mediaId).executeTakeFirstOrThrow();
  await rm(join(api.media.root, 'files', row.storage_key ?? ''), { force: true });
}
