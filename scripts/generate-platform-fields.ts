/**
 * Part of `npm run generate`: writes generated/platform-fields.ts from the spec's per-platform
 * fields schemas (scripts/platform-fields.ts). With `--check` (`npm run generate:check`) it writes
 * nothing and exits 1 when the file is not what the spec gives.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { PLATFORM_FIELDS_MODULE_PATH, renderPlatformFieldsModule } from './platform-fields.js';
import { REPO_ROOT, loadSpec } from './spec-document.js';

const out = relative(REPO_ROOT, PLATFORM_FIELDS_MODULE_PATH);

try {
  const text = renderPlatformFieldsModule(loadSpec());
  if (process.argv.includes('--check')) {
    const current = existsSync(PLATFORM_FIELDS_MODULE_PATH) ? readFileSync(PLATFORM_FIELDS_MODULE_PATH, 'utf8') : null;
    if (current !== text) {
      console.error(`${out} is not up-to-date with openapi/openapi.yaml; run npm run generate`);
      process.exit(1);
    }
  } else {
    writeFileSync(PLATFORM_FIELDS_MODULE_PATH, text);
    console.log(`wrote ${out}`);
  }
} catch (err) {
  console.error(`generate platform fields: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(2);
}
