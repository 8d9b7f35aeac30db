// Public surface of the platform rules: the table as data, and the engine that applies it.

export { captionLengths, findPlatformViolation, findViolationPerTarget, isKnownPlatform, ASPECT_RATIO_TOLERANCE } from './engine.js';
export { platformRules } from './table/index.js';
export { POST_TYPES } from './types.js';
export { TEXT_UNITS, countText } from './text-length.js';
export type {
  FieldType,
  ImageRules,
  LengthLimit,
  MediaFacts,
  MediaRules,
  MimeOverride,
  NumberRange,
  PlatformRules,
  PostType,
  PostTypeRules,
  TargetToCheck,
  TextRules,
  TextUnit,
  ThreadRules,
  VideoRules,
} from './types.js';
