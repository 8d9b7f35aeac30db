// Small constructors for the table files: they only fill in the nulls and empty lists a
// rule leaves out, so each platform file states just its own numbers.

import type {
  FieldItemRules,
  FieldRules,
  ImageRules,
  LengthLimit,
  MimeOverride,
  NumberRange,
  TextRules,
  VideoRules,
} from '../types.js';

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

const EMPTY_FIELD: Omit<FieldRules, 'key' | 'description' | 'type'> = {
  required: false,
  enum: null,
  minLength: null,
  maxLength: null,
  pattern: null,
  patternDescription: null,
  format: null,
  minimum: null,
  maximum: null,
  items: null,
  maxItems: null,
  maxTotalLength: null,
};

interface StringFieldInput {
  required?: boolean;
  enum?: string[];
  minLength?: number;
  maxLength?: number;
  pattern?: { source: string; description: string };
  format?: 'uri';
}

export function stringField(key: string, description: string, input: StringFieldInput = {}): FieldRules {
  return {
    ...EMPTY_FIELD,
    key,
    description,
    type: 'string',
    required: input.required ?? false,
    enum: input.enum ?? null,
    minLength: input.minLength ?? null,
    maxLength: input.maxLength ?? null,
    pattern: input.pattern?.source ?? null,
    patternDescription: input.pattern?.description ?? null,
    format: input.format ?? null,
  };
}

export function booleanField(key: string, description: string): FieldRules {
  return { ...EMPTY_FIELD, key, description, type: 'boolean' };
}

export function integerField(key: string, description: string, minimum: number | null, maximum: number | null): FieldRules {
  return { ...EMPTY_FIELD, key, description, type: 'integer', minimum, maximum };
}

interface ArrayFieldInput {
  maxItems?: number;
  items?: Partial<Omit<FieldItemRules, 'type'>>;
  maxTotalLength?: number;
}

export function stringArrayField(key: string, description: string, input: ArrayFieldInput = {}): FieldRules {
  return {
    ...EMPTY_FIELD,
    key,
    description,
    type: 'array',
    items: { type: 'string', minLength: input.items?.minLength ?? null, maxLength: input.items?.maxLength ?? null },
    maxItems: input.maxItems ?? null,
    maxTotalLength: input.maxTotalLength ?? null,
  };
}
