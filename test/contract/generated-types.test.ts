import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('generated/', () => {
  it('matches a fresh openapi-typescript run over openapi/openapi.yaml', async () => {
    const result = await new Promise<{ code: number; output: string }>((resolve) => {
      execFile('npm', ['run', '-s', 'generate:check'], { cwd: root, timeout: 60_000 }, (error, stdout, stderr) => {
        resolve({ code: error ? 1 : 0, output: stdout + stderr });
      });
    });
    expect(result.output).not.toContain('not up-to-date');
    expect(result.code).toBe(0);
  });
});
