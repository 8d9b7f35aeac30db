import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/schema.js';
import { storeMediaFile } from '../../src/domain/media/store-media-file.js';
import { createUser } from '../../src/domain/users.js';
import { ProbeUnavailable, type MediaProbe, type ProbedMedia, type ProbeFailure } from '../../src/domain/ports/media-probe.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testMediaSettings, type TestMediaSettings } from '../support/media-settings.js';

/**
 * The domain stores media through an injected probe, so what it does with each probe answer is
 * checked here without ffmpeg: the probe answers what the test says and records what it was asked.
 */
class ScriptedProbe implements MediaProbe {
  readonly askedPaths: string[] = [];

  /** An Error is thrown as a probe that cannot run would; anything else is answered. */
  constructor(private readonly answer: ProbedMedia | ProbeFailure | Error) {}

  probe(path: string): Promise<ProbedMedia | ProbeFailure> {
    this.askedPaths.push(path);
    return this.answer instanceof Error ? Promise.reject(this.answer) : Promise.resolve(this.answer);
  }
}

const BYTES = Buffer.from('bytes the probe is told about');

let database: TestDatabase;
let db: Kysely<Database>;
let media: TestMediaSettings;
beforeAll(async () => {
  database = await createTestDatabase();
  db = database.db;
  media = testMediaSettings();
});
afterAll(async () => {
  await database?.close();
  media?.cleanup();
});

/** An upload in staging, as the HTTP layer or the CLI hands it over. */
function stage() {
  return media.storage.stage(Readable.from([BYTES]));
}

function rowsOf(userId: string) {
  return db.selectFrom('media_assets').selectAll().where('owner_user_id', '=', userId).execute();
}

describe('storeMediaFile', () => {
  it('records the facts the probe read, and keeps the file under the new id', async () => {
    const { id: userId } = await createUser(db, 'Probed');
    const probe = new ScriptedProbe({ kind: 'video', mime: 'video/webm', width: 720, height: 1280, durationMs: 4_500 });
    const staged = await stage();
    const row = await storeMediaFile(db, media.storage, probe, userId, staged, 'alt');

    expect(probe.askedPaths).toEqual([staged.path]);
    expect(await rowsOf(userId)).toEqual([
      expect.objectContaining({
        id: row.id,
        kind: 'video',
        mime: 'video/webm',
        width: 720,
        height: 1280,
        duration_ms: 4_500,
        alt_text: 'alt',
        storage_key: `${userId}/${row.id}`,
      }),
    ]);
    expect(Number(row.bytes)).toBe(BYTES.length);
    const kept = join(media.root, 'files', userId, row.id);
    expect(media.storedFiles().filter((f) => f.includes(userId) || f === staged.path)).toEqual([kept]);
    expect(readFileSync(kept)).toEqual(BYTES);
  });

  it.each<[string, ProbeFailure, string]>([
    ['of a type it does not take', { problem: 'unsupported', mime: 'application/pdf' }, 'Unsupported media type: application/pdf'],
    ['that is corrupt, naming its type', { problem: 'corrupt', mime: 'video/mp4' }, 'Invalid media file: the video/mp4 file is truncated or corrupt'],
  ])('refuses a file %s, leaving no file and no row', async (_case, failure, message) => {
    const { id: userId } = await createUser(db, 'Refused');
    const before = media.storedFiles();
    const probe = new ScriptedProbe(failure);

    await expect(storeMediaFile(db, media.storage, probe, userId, await stage(), null)).rejects.toMatchObject({ kind: 'unusable_file', message });
    expect(media.storedFiles()).toEqual(before);
    expect(await rowsOf(userId)).toEqual([]);
  });

  it('passes on a probe that cannot run, leaving no file and no row', async () => {
    const { id: userId } = await createUser(db, 'No ffmpeg');
    const before = media.storedFiles();
    const probe = new ScriptedProbe(new ProbeUnavailable('ffprobe', 'ENOENT'));

    await expect(storeMediaFile(db, media.storage, probe, userId, await stage(), null)).rejects.toBeInstanceOf(ProbeUnavailable);
    expect(media.storedFiles()).toEqual(before);
    expect(await rowsOf(userId)).toEqual([]);
  });

  it('removes the stored file again when the row cannot be written', async () => {
    const before = media.storedFiles();
    const probe = new ScriptedProbe({ kind: 'image', mime: 'image/png', width: 10, height: 10, durationMs: null });
    // No such user: the foreign key refuses the row after the file was committed.
    await expect(storeMediaFile(db, media.storage, probe, 'usr_doesnotexist', await stage(), null)).rejects.toThrow();
    expect(media.storedFiles()).toEqual(before);
    expect(await rowsOf('usr_doesnotexist')).toEqual([]);
  });
});
