// Type-aware lint for the whole workspace: no floating promises, exhaustive switches.
// Lives in .config/ to keep the repository's top level to the project's own folders.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'libs/contracts/src/generated/**',
      'libs/client/src/schema.ts',
      '.tools/**',
      '.run/**',
    ],
  },
  js.configs.recommended,
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  {
    files: ['**/*.ts'],
    extends: [...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: root },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] },
          ],
        },
      ],
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
      // Handlers implement async interfaces; an async function without await is not a bug here.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message:
            'Read configuration through the service config (src/config.ts), validated once at start-up.',
        },
      ],
    },
  },
  {
    // Config modules and tests may read the environment; the runner and set-up scripts are plain JS.
    files: ['**/config.ts', '**/*.test.ts', 'libs/config/src/**', 'libs/devcluster/src/**', 'test/**'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // The random-weight model builders are for tests and the local runner only: a service or a
    // library that imported them would ship development code (and its weights) in production.
    files: ['services/*/src/**/*.ts', 'libs/*/src/**/*.ts'],
    ignores: ['**/*.test.ts', '**/*.test-support.ts', 'libs/models-dev/**', 'libs/devcluster/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@switchboard/models-dev', '@switchboard/models-dev/*'],
              message: 'Development model builders belong to tests and the local runner.',
            },
          ],
        },
      ],
    },
  },
);
