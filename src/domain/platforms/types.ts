// Shapes of the rules table and of the engine's input. The table is plain JSON (numbers,
// strings, arrays, nested objects, null for "no limit") because GET /api/v1/platforms serves it
// as is.

import type { components } from '../../../generated/openapi.js';

export type { TextUnit } from './text-length.js';

/** The service's post type vocabulary (fixed; each platform supports a subset). */
export type PostType = components['schemas']['PostType'];

export const POST_TYPES: readonly PostType[] = ['post', 'carousel', 'reel', 'story', 'short', 'thread'];

/*
 * The table's shapes are the API's: GET /api/v1/platforms serves the table as is, so its types are
 * the spec's schemas (generated), and the table cannot say anything the spec does not describe.
 */
type Schemas = components['schemas'];
export type LengthLimit = Schemas['PlatformLengthLimit'];
export type TextRules = Schemas['PlatformTextRules'];
export type NumberRange = Schemas['PlatformNumberRange'];
export type MimeOverride = Schemas['PlatformMimeOverride'];
export type ImageRules = Schemas['PlatformImageRules'];
export type VideoRules = Schemas['PlatformVideoRules'];
export type MediaRules = Schemas['PlatformMediaRules'];
export type PostTypeRules = Schemas['PlatformPostType'];
export type ThreadRules = Schemas['PlatformThreadRules'];
export type FieldType = Schemas['PlatformFieldType'];
/** A platform's rules as its table file states them; how it connects comes from the live descriptors and the server's configuration. */
export type PlatformRules = Omit<Schemas['Platform'], 'connect' | 'connectWith' | 'configured'>;

/** Media facts the engine needs (from the stored, probed media asset). */
export interface MediaFacts {
  id: string;
  kind: 'image' | 'video';
  mime: string;
  bytes: number;
  width: number | null;
  height: number | null;
  durationMs: number | null;
}

export interface TargetToCheck {
  accountId: string;
  /** One of the table's platform ids. */
  platform: string;
  postType: PostType;
  /** Already resolved: captionOverride if set, else the default caption. */
  caption: string | null;
  firstComment: string | null;
  /** The post's media in mediaIds order. */
  media: MediaFacts[];
  /** This account's entry from threadParts; null when absent. */
  threadParts: string[] | null;
  /** accountOverrides[].fields for this account. */
  fields: Record<string, unknown> | null;
}
