import type { MediaRow } from '../../data/queries/media.js';
import type { Media } from '../api-types.js';

export function toMediaView(row: MediaRow): Media {
  return {
    id: row.id,
    kind: row.kind,
    mime: row.mime,
    bytes: Number(row.bytes),
    width: row.width,
    height: row.height,
    durationMs: row.duration_ms,
    altText: row.alt_text,
    createdAt: row.created_at.toISOString(),
  };
}
