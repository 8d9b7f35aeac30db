import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

export const SPEC_PATH = fileURLToPath(new URL('../../../openapi/openapi.yaml', import.meta.url));
export const REFERENCE_HTML_PATH = fileURLToPath(new URL('../../../docs/index.html', import.meta.url));

/** The contract, read once: the routes are wired from this document and it is served as is. */
export interface Specification {
  yaml: string;
  document: Record<string, unknown>;
}

/** The spec as scripts/build.ts read and parsed it, in the compiled binary; not defined when running from the sources. */
declare const HERALD_BUILT_SPECIFICATION: string | undefined;

export async function loadSpecification(path = SPEC_PATH): Promise<Specification> {
  // Parsing the YAML was ~0.25 s of every server start, so the binary carries the document parsed (rebuilt with it).
  if (path === SPEC_PATH && typeof HERALD_BUILT_SPECIFICATION === 'string') return JSON.parse(HERALD_BUILT_SPECIFICATION) as Specification;
  const yaml = await readFile(path, 'utf8');
  return { yaml, document: parse(yaml) as Record<string, unknown> };
}
