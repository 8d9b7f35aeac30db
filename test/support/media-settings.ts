import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MediaSettings } from '../../src/operations/context.js';
import { LocalDiskStorage } from '../../src/storage/local-disk-storage.js';

export interface TestMediaSettings extends MediaSettings {
  root: string;
  cleanup(): void;
}

/** Media storage in a fresh temporary folder; `cleanup` removes it. */
export function testMediaSettings(maxUploadBytes = 5 * 1024 * 1024): TestMediaSettings {
  const root = mkdtempSync(join(tmpdir(), 'herald-media-'));
  return { root, storage: new LocalDiskStorage(root), maxUploadBytes, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}
