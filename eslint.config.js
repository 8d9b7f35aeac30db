import js from '@eslint/js';
import boundaries from 'eslint-plugin-boundaries';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/**
 * The layers of src/ and what each may import. Imports point downwards only (skipping a layer is
 * fine); anything not allowed here is an error. Packages are not covered by this table: the
 * Fastify ban for domain and data is the no-restricted-imports rule below.
 */
const LAYERS = [
  'http', 'worker', 'operations', 'operations-kit', 'contract', 'domain', 'data',
  'storage', 'probe', 'publishers', 'webhook-sender', 'net', 'secrets', 'config', 'cli',
];

// Adapters to the outside world: beside data, injected into the domain, which knows only their interfaces.
const ADAPTERS = ['storage', 'probe', 'publishers', 'webhook-sender', 'secrets'];

const may = (from, to, { typesOnly = false } = {}) => ({
  from: { type: from },
  allow: typesOnly ? { to: { type: to }, dependency: { kind: 'type' } } : { to: { type: to } },
});

const layerRules = [
  may('http', ['worker', 'operations', 'operations-kit', 'contract', 'domain', 'data', ...ADAPTERS, 'net', 'config', 'generated']),
  // The worker is the front door of due work, as http is the API's: it wires adapters into the domain.
  may('worker', ['domain', 'data', ...ADAPTERS, 'net', 'config']),
  may('operations', ['operations-kit', 'contract', 'domain', 'generated']),
  // Operations hand the storage on to the domain; they never call it.
  may('operations', 'storage', { typesOnly: true }),
  may('operations-kit', ['contract', 'domain', 'storage', 'generated']),
  // The context names the types of what it carries (the database handle, the probe), nothing more.
  may('operations-kit', ['data', 'probe', 'publishers', 'secrets'], { typesOnly: true }),
  may('contract', 'generated'),
  may('domain', ['data', 'generated']),
  may('domain', ADAPTERS, { typesOnly: true }),
  may('data', 'generated'),
  // The sandbox publisher's platform is Herald's own outbox table.
  may('publishers', ['data', 'net']),
  may('webhook-sender', 'net'),
  may('cli', ['http', 'worker', 'domain', 'data', ...ADAPTERS, 'net', 'config']),
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
    files: ['src/domain/**', 'src/data/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['fastify', 'fastify-*', '@fastify/*'],
              message: 'The domain and data layers know nothing of HTTP: take plain values (a token, not a header) from the caller.',
            },
          ],
        },
      ],
    },
  },
);
