import { randomBytes } from 'node:crypto';

/** Every id is a type prefix and 26 characters of Crockford base32 (130 random bits): opaque, unguessable, readable in logs. */
export type IdPrefix = 'usr' | 'org' | 'key' | 'acc' | 'med' | 'post' | 'whk' | 'evt' | 'dlv' | 'conn';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const BODY_LENGTH = 26;

export function newId(prefix: IdPrefix): string {
  const bytes = randomBytes(BODY_LENGTH);
  let body = '';
  for (let i = 0; i < BODY_LENGTH; i++) body += ALPHABET[(bytes[i] ?? 0) & 31];
  return `${prefix}_${body}`;
}

const PATTERNS = new Map<IdPrefix, RegExp>();

/** Whether a string could be an id of this type; anything else cannot exist, so needs no lookup. */
export function isWellFormedId(prefix: IdPrefix, value: string): boolean {
  let pattern = PATTERNS.get(prefix);
  if (!pattern) {
    pattern = new RegExp(`^${prefix}_[${ALPHABET}]{${BODY_LENGTH}}$`);
    PATTERNS.set(prefix, pattern);
  }
  return pattern.test(value);
}
