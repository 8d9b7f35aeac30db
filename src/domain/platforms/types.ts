// Shapes of the rules table. Everything here is plain JSON (numbers, strings, arrays,
// nested objects, null for "no limit") because the same objects are served as-is by
// GET /api/v1/platforms; the OpenAPI schemas mirror these interfaces one to one.

import type { TextUnit } from './text-length.js';

export type { TextUnit } from './text-length.js';

export const POST_TYPES = ['post', 'carousel', 'reel', 'story', 'short', 'thread'] as const;

/** The service's post type vocabulary (fixed; each platform supports a subset). */
export type PostType = (typeof POST_TYPES)[number];

/** One length limit in one counting unit; a text must satisfy every limit in its list. */
export interface LengthLimit {
  max: number;
  unit: TextUnit;
}

export interface TextRules {
  limits: LengthLimit[];
  /** Single characters the platform refuses anywhere in the text. */
  forbiddenCharacters: string[];
}

/** Inclusive range; a null end is unbounded. */
export interface NumberRange {
  min: number | null;
  max: number | null;
}

/** A MIME type with its own rules inside a kind (X: an animated GIF). */
export interface MimeOverride {
  mimeType: string;
  /** Replaces the kind's maxBytes for this type; null keeps the kind's value. */
  maxBytes: number | null;
  /** The file must be the only file of the post. */
  onlyFile: boolean;
}

export interface ImageRules {
  /** Most images one post may carry. */
  maxCount: number;
  /** Accepted MIME types; "image/*" accepts any image type. */
  mimeTypes: string[];
  minBytes: number | null;
  maxBytes: number | null;
  /** Width / height, compared with a 1% tolerance. */
  aspectRatio: NumberRange;
  mimeOverrides: MimeOverride[];
}

export interface VideoRules {
  maxCount: number;
  mimeTypes: string[];
  minBytes: number | null;
  maxBytes: number | null;
  aspectRatio: NumberRange;
  durationSeconds: NumberRange;
}

export interface MediaRules {
  /** Files the post must carry; 0 when media is optional. */
  minFiles: number;
  maxFiles: number;
  /** Whether images and videos may share one post. */
  allowMixing: boolean;
  /** null: images are not accepted for this post type. */
  image: ImageRules | null;
  /** null: videos are not accepted for this post type. */
  video: VideoRules | null;
}

export interface PostTypeRules {
  postType: PostType;
  /** What this post type becomes on the platform. */
  description: string;
  /** null: the post type takes no caption. */
  caption: TextRules | null;
  media: MediaRules;
  /** null: no first comment for this post type. */
  firstComment: TextRules | null;
}

export interface ThreadRules {
  /** chain: each part is its own post, replying to the previous one. single: one post carrying the full text. */
  style: 'chain' | 'single';
  description: string;
  minParts: number;
  maxParts: number;
  part: TextRules;
}

export type FieldType = 'string' | 'boolean' | 'integer' | 'array';

/** Item rule of an array field (arrays hold strings only). */
export interface FieldItemRules {
  type: 'string';
  minLength: number | null;
  maxLength: number | null;
}

/** One key of a platform's `fields` object: a small JSON-Schema-like description. */
export interface FieldRules {
  key: string;
  description: string;
  type: FieldType;
  required: boolean;
  /** Strings: the only values accepted. */
  enum: string[] | null;
  /** Strings: length in UTF-16 code units. */
  minLength: number | null;
  maxLength: number | null;
  /** Strings: ECMAScript regular expression the whole value must match. */
  pattern: string | null;
  /** The rule behind `pattern`, worded for messages (e.g. "must be a numeric id"). */
  patternDescription: string | null;
  /** Strings: "uri" requires an absolute http or https URL. */
  format: 'uri' | null;
  /** Integers: inclusive bounds. */
  minimum: number | null;
  maximum: number | null;
  /** Arrays. */
  items: FieldItemRules | null;
  maxItems: number | null;
  /** Arrays: sum of item lengths, where an item containing a space counts 2 more (YouTube tags are quoted). */
  maxTotalLength: number | null;
}

export interface PlatformRules {
  /** Platform id as stored on accounts (e.g. "x", "instagram"). */
  id: string;
  /** Name used in messages (e.g. "X", "LinkedIn"). */
  displayName: string;
  /** Supported post types, in vocabulary order. */
  postTypes: PostTypeRules[];
  /** How postType "thread" is published; null when the platform has no thread rendition. */
  thread: ThreadRules | null;
  /** Allowed keys of accountOverrides[].fields; any other key is refused. */
  fields: FieldRules[];
}

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
