import { expect } from 'vitest';

/**
 * vitest types its asymmetric matchers as `any`, which switches type checking off wherever one is
 * placed. These say what the matcher stands for, so the expected object keeps its type.
 */
export function stringMatching(pattern: RegExp): string {
  return expect.stringMatching(pattern) as string;
}

export function anyString(): string {
  return expect.any(String) as string;
}
