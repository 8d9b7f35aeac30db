// Small constructors for the table files: they only fill in the nulls and empty lists a
// rule leaves out, so each platform file states just its own numbers.

import type { ImageRules, LengthLimit, MimeOverride, NumberRange, TextRules, VideoRules } from '../types.js';

/** Decimal units: the reference reads an undefined "MB" as 1,000,000 bytes (the stricter reading). */
export const KB = 1_000;
export const MB = 1_000_000;
export const GB = 1_000_000_000;

export const UNBOUNDED: NumberRange = { min: null, max: null };

export function range(min: number | null, max: number | null): NumberRange {
  return { min, max };
}

export function text(...limits: LengthLimit[]): TextRules {
  return { limits, forbiddenCharacters: [] };
}

export function textWithout(forbiddenCharacters: string[], ...limits: LengthLimit[]): TextRules {
  return { limits, forbiddenCharacters };
}

interface ImageInput {
  maxCount: number;
  mimeTypes: string[];
  minBytes?: number;
  maxBytes?: number;
  aspectRatio?: NumberRange;
  mimeOverrides?: MimeOverride[];
}

export function image(input: ImageInput): ImageRules {
  return {
    maxCount: input.maxCount,
    mimeTypes: input.mimeTypes,
    minBytes: input.minBytes ?? null,
    maxBytes: input.maxBytes ?? null,
    aspectRatio: input.aspectRatio ?? UNBOUNDED,
    mimeOverrides: input.mimeOverrides ?? [],
  };
}

interface VideoInput {
  maxCount: number;
  mimeTypes: string[];
  minBytes?: number;
  maxBytes?: number;
  aspectRatio?: NumberRange;
  durationSeconds?: NumberRange;
}

export function video(input: VideoInput): VideoRules {
  return {
    maxCount: input.maxCount,
    mimeTypes: input.mimeTypes,
    minBytes: input.minBytes ?? null,
    maxBytes: input.maxBytes ?? null,
    aspectRatio: input.aspectRatio ?? UNBOUNDED,
    durationSeconds: input.durationSeconds ?? UNBOUNDED,
  };
}
