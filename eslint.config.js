import js from '@eslint/js';
import boundaries from 'eslint-plugin-boundaries';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/**
 * The layers of src/ and what each may import. Imports point downwards only (skipping a layer is
 * fine); anything not allowed here is an error. Packages are not covered by this table: the
 * Fastify ban for domain and db is the no-restricted-imports rule below.
 *
 *   cli       entry points, and the wiring that builds one process from the configuration
 *   api       Fastify: the app, one file per operationId (operations/), what they share (kit/)
 *   worker    due work: claiming, lanes, housekeeping
 *   domain    product rules, and the ports (interfaces) of what they need from outside
 *   db        Kysely queries, migrations, the embedded PostgreSQL
 *   adapters  the outside world: platforms, storage, probing, secrets, webhook sending, the guarded fetch
 */
const LAYERS = ['cli', 'api', 'worker', 'domain', 'db', 'adapters'];

const may = (from, to, { typesOnly = false } = {}) => ({
  from: { type: from },
  allow: typesOnly ? { to: { type: to }, dependency: { kind: 'type' } } : { to: { type: to } },
});

const layerRules = [
  may('cli', ['api', 'worker', 'domain', 'db', 'adapters', 'generated']),
  may('api', ['domain', 'db', 'generated']),
  may('worker', ['domain', 'db']),
  may('domain', ['db', 'generated']),
  may('db', 'generated'),
  // Adapters implement the domain's ports; the sandbox publisher's platform is Herald's own outbox table.
  may('adapters', ['domain', 'db', 'generated']),
];

export default defineConfig(
  { ignores: ['node_modules/', 'generated/', 'docs/', 'dist/', 'coverage/', '.herald/'] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      // A leading underscore marks a binding kept on purpose: a position in a signature, a field left out of a rest.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    // Plain JavaScript (this file, the CLI launcher) is outside the TypeScript project.
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  {
    files: ['src/**', 'generated/**'],
    plugins: { boundaries },
    settings: {
      'import/resolver': { typescript: { project: './tsconfig.json' } },
      'boundaries/elements': [
        ...LAYERS.map((type) => ({ type, pattern: `src/${type}`, mode: 'folder' })),
        { type: 'generated', pattern: 'generated', mode: 'folder' },
      ],
    },
    rules: {
      'boundaries/dependencies': [
        'error',
        {
          default: 'disallow',
          // An import of one of our files outside every layer (test/, scripts/) is refused too.
          checkUnknownLocals: true,
          rules: layerRules,
        },
      ],
    },
  },
  {
    files: ['src/**'],
    ignores: ['src/cli/wiring/configuration.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message: 'Read settings from the configuration table (src/cli/wiring/configuration.ts), where each has its type and default.',
        },
      ],
    },
  },
  {
    files: ['src/domain/**', 'src/db/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['fastify', 'fastify-*', '@fastify/*'],
              message: 'The domain and db layers know nothing of HTTP: take plain values (a token, not a header) from the caller.',
            },
          ],
        },
      ],
    },
  },
);
