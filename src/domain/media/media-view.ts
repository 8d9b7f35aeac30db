import type { MediaFactsRow, MediaRow } from '../../db/queries/media.js';
import type { Media } from '../api-types.js';
import type { MediaFacts } from '../platforms/index.js';

/** What the platform rules need to know of a stored media asset. */
export function toMediaFacts(row: MediaFactsRow): MediaFacts {
  return {
    id: row.id,
    kind: row.kind,
    mime: row.mime,
    bytes: Number(row.bytes),
    width: row.width,
    height: row.height,
    durationMs: row.duration_ms,
  };
}

export function toMediaView(row: MediaRow): Media {
  return { ...toMediaFacts(row), altText: row.alt_text, createdAt: row.created_at.toISOString() };
}
