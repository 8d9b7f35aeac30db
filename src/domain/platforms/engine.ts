// Applies the rules table to the targets of a post. Targets are checked in request order
// and, per target, in a fixed order (post type, caption, media, thread parts, first
// comment, fields); the first violation is the answer, so the same request always gets
// the same message.

import { findFieldsViolation } from './fields.js';
import { countRange, describeValue, formatBytes, formatNumber, orList, plural, valueRange } from './format.js';
import { platformRules } from './table/index.js';
import { countText, unitWord, utf16Length, type TextUnit } from './text-length.js';
import type { ImageRules, MediaFacts, PlatformRules, PostTypeRules, TargetToCheck, TextRules, VideoRules } from './types.js';

/** Real files rarely hit a ratio exactly (1080x566 is 1.908 for 1.91:1), so ratios get 1% either way. */
export const ASPECT_RATIO_TOLERANCE = 0.01;

const RULES_BY_ID: ReadonlyMap<string, PlatformRules> = new Map(platformRules.map((p) => [p.id, p]));

type Category = 'caption' | 'media' | 'firstComment';

// The post type is named in a message only where it matters: when that kind of rule is
// not the same for every post type of the platform ("X caption ..." but "Instagram reel
// caption ...", since an Instagram story takes none).
const VARYING: ReadonlyMap<string, ReadonlySet<Category>> = new Map(
  platformRules.map((platform) => {
    const varying = new Set<Category>();
    for (const category of ['caption', 'media', 'firstComment'] as const) {
      const shapes = new Set(platform.postTypes.map((type) => JSON.stringify(type[category])));
      if (shapes.size > 1) varying.add(category);
    }
    return [platform.id, varying];
  }),
);

export function isKnownPlatform(id: string): boolean {
  return RULES_BY_ID.has(id);
}

/** First violation over all targets in order, as the user-facing message; null when all pass. */
export function findPlatformViolation(targets: readonly TargetToCheck[]): string | null {
  for (const target of targets) {
    const violation = checkTarget(target);
    if (violation !== null) return violation;
  }
  return null;
}

/** Each target's first violation in request order, null for a target that passes: what a dry run shows. */
export function findViolationPerTarget(targets: readonly TargetToCheck[]): (string | null)[] {
  return targets.map(checkTarget);
}

export interface TextCount {
  unit: TextUnit;
  count: number;
  max: number;
}

/**
 * The caption's length against each limit its platform counts it by. Empty when no caption is
 * judged: none given, a post type without captions, or thread parts published instead.
 */
export function captionLengths(target: TargetToCheck): TextCount[] {
  const type = RULES_BY_ID.get(target.platform)?.postTypes.find((candidate) => candidate.postType === target.postType);
  const caption = target.caption ?? '';
  if (type?.caption == null || caption === '' || (target.postType === 'thread' && target.threadParts !== null)) return [];
  return type.caption.limits.map((limit) => ({ unit: limit.unit, count: countText(caption, limit.unit), max: limit.max }));
}

interface Scope {
  platform: PlatformRules;
  type: PostTypeRules;
  target: TargetToCheck;
  where: string;
}

function checkTarget(target: TargetToCheck): string | null {
  const where = `(account ${target.accountId})`;
  const platform = RULES_BY_ID.get(target.platform);
  if (platform === undefined) {
    return `Platform must be one of ${orList([...RULES_BY_ID.keys()])}; got ${describeValue(target.platform)} ${where}`;
  }
  const type = platform.postTypes.find((candidate) => candidate.postType === target.postType);
  if (type === undefined) {
    const supported = orList(platform.postTypes.map((candidate) => candidate.postType));
    return `${platform.displayName} allows post types ${supported}; got ${target.postType} ${where}`;
  }
  const scope: Scope = { platform, type, target, where };
  return checkCaption(scope) ?? checkMedia(scope) ?? checkThreadParts(scope) ?? checkFirstComment(scope) ?? checkFields(scope);
}

function subject(scope: Scope, category: Category): string {
  const varies = VARYING.get(scope.platform.id)?.has(category) ?? false;
  return varies ? `${scope.platform.displayName} ${scope.type.postType}` : scope.platform.displayName;
}

function checkText(text: string, rules: TextRules, name: string, where: string): string | null {
  for (const limit of rules.limits) {
    const count = countText(text, limit.unit);
    if (count > limit.max) {
      return `${name} allows at most ${limit.max} ${unitWord(limit.unit, limit.max)}; got ${count} ${where}`;
    }
  }
  const found = rules.forbiddenCharacters.find((character) => text.includes(character));
  if (found !== undefined) {
    return `${name} allows no ${orList(rules.forbiddenCharacters)}; got ${describeValue(found)} ${where}`;
  }
  return null;
}

function checkCaption(scope: Scope): string | null {
  const { target, type, where } = scope;
  // With threadParts the parts are what gets published for this account, so they are
  // checked instead (step 4); the caption may be the long text meant for other targets.
  if (target.postType === 'thread' && target.threadParts !== null) return null;
  const caption = target.caption ?? '';
  if (caption === '') return null;
  const name = subject(scope, 'caption');
  if (type.caption === null) {
    return `${name} allows no caption; got ${plural(utf16Length(caption), 'character')} ${where}`;
  }
  return checkText(caption, type.caption, `${name} caption`, where);
}

function checkMedia(scope: Scope): string | null {
  const { target, where } = scope;
  const rules = scope.type.media;
  const name = subject(scope, 'media');
  const files = target.media;
  if (files.length < rules.minFiles || files.length > rules.maxFiles) {
    return `${name} allows ${countRange(rules.minFiles, rules.maxFiles, 'file')}; got ${files.length} ${where}`;
  }
  for (const file of files) {
    if ((file.kind === 'image' ? rules.image : rules.video) === null) {
      const allowed = rules.image !== null ? 'images' : 'videos';
      return `${name} allows only ${allowed}; got ${file.kind === 'image' ? 'an image' : 'a video'} ${fileWhere(file, target)}`;
    }
  }
  const images = files.filter((file) => file.kind === 'image').length;
  const videos = files.length - images;
  if (!rules.allowMixing && images > 0 && videos > 0) {
    return `${name} allows images or videos, not both; got ${plural(images, 'image')} and ${plural(videos, 'video')} ${where}`;
  }
  if (rules.image !== null && images > rules.image.maxCount) {
    return `${name} allows at most ${plural(rules.image.maxCount, 'image')}; got ${images} ${where}`;
  }
  if (rules.video !== null && videos > rules.video.maxCount) {
    return `${name} allows at most ${plural(rules.video.maxCount, 'video')}; got ${videos} ${where}`;
  }
  for (const file of files) {
    let violation: string | null = null;
    if (file.kind === 'image' && rules.image !== null) violation = checkImage(name, file, rules.image, target);
    if (file.kind === 'video' && rules.video !== null) violation = checkVideo(name, file, rules.video, target);
    if (violation !== null) return violation;
  }
  return null;
}

function fileWhere(file: MediaFacts, target: TargetToCheck): string {
  return `(media ${file.id}, account ${target.accountId})`;
}

// "image/JPEG; charset=x" is image/jpeg; "image/jpg" is a common misspelling of it.
function normalizeMime(mime: string): string {
  const bare = (mime.split(';')[0] ?? '').trim().toLowerCase();
  return bare === 'image/jpg' ? 'image/jpeg' : bare;
}

function mimeAccepted(mime: string, accepted: readonly string[]): boolean {
  const family = mime.split('/')[0] ?? '';
  return accepted.some((entry) => entry === mime || entry === `${family}/*`);
}

function checkImage(base: string, file: MediaFacts, rules: ImageRules, target: TargetToCheck): string | null {
  const override = rules.mimeOverrides.find((candidate) => candidate.mimeType === normalizeMime(file.mime));
  if (override === undefined) return checkFile(`${base} image`, file, rules, rules.maxBytes, target);
  const name = `${base} ${override.mimeType}`;
  if (override.onlyFile && target.media.length > 1) {
    return `${name} allows no other files in the post; got ${plural(target.media.length, 'file')} ${fileWhere(file, target)}`;
  }
  return checkFile(name, file, rules, override.maxBytes ?? rules.maxBytes, target);
}

function checkVideo(base: string, file: MediaFacts, rules: VideoRules, target: TargetToCheck): string | null {
  const name = `${base} video`;
  const violation = checkFile(name, file, rules, rules.maxBytes, target);
  if (violation !== null || file.durationMs === null) return violation; // unknown duration cannot be judged
  const seconds = file.durationMs / 1000;
  const { min, max } = rules.durationSeconds;
  if ((min !== null && seconds < min) || (max !== null && seconds > max)) {
    return `${name} allows a duration ${valueRange(min, max)} seconds; got ${formatNumber(seconds)} seconds ${fileWhere(file, target)}`;
  }
  return null;
}

/** Checks shared by images and videos: type, size, aspect ratio. */
function checkFile(name: string, file: MediaFacts, rules: ImageRules | VideoRules, maxBytes: number | null, target: TargetToCheck): string | null {
  const where = fileWhere(file, target);
  if (!mimeAccepted(normalizeMime(file.mime), rules.mimeTypes)) {
    return `${name} allows ${orList(rules.mimeTypes)}; got ${file.mime} ${where}`;
  }
  if (maxBytes !== null && file.bytes > maxBytes) {
    const [limit, actual] = formatBytes(maxBytes, file.bytes);
    return `${name} allows at most ${limit}; got ${actual} ${where}`;
  }
  if (rules.minBytes !== null && file.bytes < rules.minBytes) {
    const [limit, actual] = formatBytes(rules.minBytes, file.bytes);
    return `${name} allows at least ${limit}; got ${actual} ${where}`;
  }
  // Unknown dimensions (not probed) cannot be judged, so they pass.
  const { min, max } = rules.aspectRatio;
  const { width, height } = file;
  if (width === null || height === null || width <= 0 || height <= 0 || (min === null && max === null)) return null;
  const ratio = width / height;
  const tooNarrow = min !== null && ratio < min * (1 - ASPECT_RATIO_TOLERANCE);
  const tooWide = max !== null && ratio > max * (1 + ASPECT_RATIO_TOLERANCE);
  if (tooNarrow || tooWide) {
    return `${name} allows an aspect ratio (width/height) ${valueRange(min, max)}; got ${formatNumber(ratio)} from ${width}x${height} ${where}`;
  }
  return null;
}

function checkThreadParts(scope: Scope): string | null {
  const { platform, target, where } = scope;
  const parts = target.threadParts;
  if (parts === null) return null;
  if (target.postType !== 'thread') {
    if (parts.length === 0) return null;
    const hint = platform.thread !== null ? ' (they need post type thread)' : '';
    return `${platform.displayName} ${target.postType} allows no thread parts${hint}; got ${parts.length} ${where}`;
  }
  const thread = platform.thread;
  if (thread === null) return null; // a platform without a thread rendition does not list the thread post type
  if (parts.length < thread.minParts || parts.length > thread.maxParts) {
    const allowed = thread.style === 'single' ? `exactly 1 part carrying the full text` : countRange(thread.minParts, thread.maxParts, 'part');
    return `${platform.displayName} thread allows ${allowed}; got ${parts.length} ${where}`;
  }
  for (const [index, part] of parts.entries()) {
    const violation = checkText(part, thread.part, `${platform.displayName} thread part ${index + 1}`, where);
    if (violation !== null) return violation;
  }
  return null;
}

function checkFirstComment(scope: Scope): string | null {
  const { target, type, where } = scope;
  const comment = target.firstComment ?? '';
  if (comment === '') return null;
  const name = subject(scope, 'firstComment');
  if (type.firstComment === null) {
    return `${name} allows no first comment; got ${plural(utf16Length(comment), 'character')} ${where}`;
  }
  return checkText(comment, type.firstComment, `${name} first comment`, where);
}

function checkFields(scope: Scope): string | null {
  const fields = scope.target.fields ?? {};
  const violation = findFieldsViolation(scope.platform, fields);
  if (violation !== null) return `${violation} ${scope.where}`;
  const files = scope.target.media.length;
  const excluding = files === 0 ? undefined : scope.platform.fields.find((field) => field.excludesMedia && fields[field.key] !== undefined);
  if (excluding === undefined) return null;
  return `${scope.platform.displayName} field "${excluding.key}" makes a post without media; got ${plural(files, 'file')} ${scope.where}`;
}
