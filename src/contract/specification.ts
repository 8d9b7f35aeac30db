import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

export const SPEC_PATH = fileURLToPath(new URL('../../openapi/openapi.yaml', import.meta.url));
export const REFERENCE_HTML_PATH = fileURLToPath(new URL('../../docs/index.html', import.meta.url));

/** The contract, read once: the routes are wired from this document and it is served as is. */
export interface Specification {
  yaml: string;
  document: Record<string, unknown>;
}

export async function loadSpecification(path = SPEC_PATH): Promise<Specification> {
  const yaml = await readFile(path, 'utf8');
  return { yaml, document: parse(yaml) as Record<string, unknown> };
}
