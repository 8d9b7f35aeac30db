import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Dependencies } from '../../src/domain/dependencies.js';
import { FfprobeMediaProbe } from '../../src/adapters/probe/ffprobe-media-probe.js';
import { LocalDiskStorage } from '../../src/adapters/storage/local-disk-storage.js';

export interface TestMediaSettings extends Pick<Dependencies, 'storage' | 'probe' | 'maxUploadBytes'> {
  root: string;
  /** Every file under the root, committed and staged: a refused upload must leave none. */
  storedFiles(): string[];
  cleanup(): void;
}

/** Media storage in a fresh temporary folder, probed with ffmpeg as in production; `cleanup` removes it. */
export function testMediaSettings(maxUploadBytes = 5 * 1024 * 1024): TestMediaSettings {
  const root = mkdtempSync(join(tmpdir(), 'herald-media-'));
  return {
    root,
    storage: new LocalDiskStorage(root),
    probe: new FfprobeMediaProbe(),
    maxUploadBytes,
    storedFiles: () => filesUnder(root),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

function filesUnder(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
  } catch {
    return [];
  }
}
