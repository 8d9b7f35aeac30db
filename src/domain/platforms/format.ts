// Wording helpers for violation messages. Pattern, everywhere:
//   "<Platform> [<post type>] <subject> <rule>; got <actual> (<where>)"
// e.g. "Instagram carousel allows between 2 and 10 files; got 12 (account acc_1)".

/** "a", "a or b", "a, b or c". */
export function orList(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} or ${items[items.length - 1] ?? ''}`;
}

export function plural(count: number, noun: string): string {
  return `${count} ${count === 1 ? noun : `${noun}s`}`;
}

/** Up to 4 decimals, no trailing zeros: 0.5625, 1.9084, 3. */
export function formatNumber(value: number): string {
  return String(Number(value.toFixed(4)));
}

/** "exactly 1 file", "between 2 and 10 files", "at most 4 files", "at least 2 files". */
export function countRange(min: number, max: number | null, noun: string): string {
  if (max === null) return `at least ${plural(min, noun)}`;
  if (min === max) return `exactly ${plural(min, noun)}`;
  if (min === 0) return `at most ${plural(max, noun)}`;
  return `between ${min} and ${plural(max, noun)}`;
}

/** "between 0.8 and 1.91", "of at most 1", "of at least 3", "of exactly 0.5625" (null: unbounded). */
export function valueRange(min: number | null, max: number | null): string {
  if (min !== null && max !== null) {
    return min === max ? `of exactly ${formatNumber(min)}` : `between ${formatNumber(min)} and ${formatNumber(max)}`;
  }
  if (max !== null) return `of at most ${formatNumber(max)}`;
  return `of at least ${formatNumber(min ?? 0)}`;
}

// A byte limit is shown in the largest decimal unit that divides it exactly, and the
// actual size in that same unit with every digit kept, so "5 MB" vs "5.000001 MB" never
// rounds into a contradiction.
function byteUnit(limit: number): { divisor: number; digits: number; label: string } {
  if (limit % 1_000_000_000 === 0) return { divisor: 1_000_000_000, digits: 9, label: 'GB' };
  if (limit % 1_000_000 === 0) return { divisor: 1_000_000, digits: 6, label: 'MB' };
  if (limit % 1_000 === 0) return { divisor: 1_000, digits: 3, label: 'KB' };
  return { divisor: 1, digits: 0, label: 'bytes' };
}

/** [limit, actual] sizes in the limit's unit: ["5 MB", "5.000001 MB"]. */
export function formatBytes(limit: number, actual: number): [string, string] {
  const { divisor, digits, label } = byteUnit(limit);
  const show = (bytes: number): string => `${String(Number((bytes / divisor).toFixed(digits)))} ${label}`;
  return [show(limit), show(actual)];
}

const MAX_SHOWN = 40;

/** A value as quoted in a message: strings in JSON quotes (shortened), others by kind. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') {
    const quoted = JSON.stringify(value);
    return quoted.length <= MAX_SHOWN ? quoted : `${quoted.slice(0, MAX_SHOWN - 2)}…"`;
  }
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : typeof value;
}
