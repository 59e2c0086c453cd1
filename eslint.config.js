// Lint rules for the whole tree. typescript-eslint's recommended rules with
// type information, plus the module boundaries the layout promises: node and
// router meet only over gRPC, and the client library needs nothing but wire.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import importLayers from './eslint/import-layers.js';
import surfaces from './eslint/surfaces.js';

/** Import paths a folder may not reach, as no-restricted-imports patterns. */
function forbidImports(folders, message) {
  return {
    'no-restricted-imports': ['error', { patterns: folders.map((folder) => ({ group: [`**/${folder}/*`, `**/${folder}`], message })) }],
  };
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'packages/*/dist/**', 'src/generated/**', 'data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: { ...globals.node },
    },
    rules: {
      // Unused names are dead code; a leading underscore marks a parameter kept for its position.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-console': 'off',
    },
  },
  {
    files: ['src/node/**/*.ts'],
    rules: forbidImports(
      ['router', 'client', 'cli', 'cluster'],
      'a node meets the router only over gRPC; share formats through src/wire, plumbing through src/common',
    ),
  },
  {
    files: ['src/router/**/*.ts'],
    rules: forbidImports(
      ['node', 'client', 'cli', 'cluster'],
      'the router meets nodes only over gRPC; share formats through src/wire, plumbing through src/common',
    ),
  },
  {
    // The router's rooms and layers (eslint/import-layers.js); src/ only: tests may reach a module's internals.
    files: ['src/**/*.ts'],
    plugins: { tally: importLayers },
    rules: { 'tally/router-layers': 'error' },
  },
  {
    files: ['src/client/**/*.ts'],
    rules: forbidImports(
      ['node', 'router', 'cli', 'cluster', 'window', 'sketch', 'membership', 'relay'],
      'the client library imports only src/wire/index.ts',
    ),
  },
  {
    files: ['src/common/**/*.ts'],
    rules: forbidImports(['node', 'router', 'client', 'cli', 'cluster'], 'common is shared by every process and imports none of them'),
  },
  {
    files: ['src/wire/**/*.ts'],
    rules: forbidImports(
      ['node', 'router', 'client', 'cli', 'cluster', 'relay', 'common', 'window', 'sketch', 'membership'],
      'wire is what the client ships and every process shares: it imports no process and no server plumbing',
    ),
  },
  {
    // The surfaces of src/wire and src/common (eslint/surfaces.js); src/ only: tests may reach a module's internals.
    files: ['src/**/*.ts'],
    plugins: { 'tally-surfaces': surfaces },
    rules: { 'tally-surfaces/surfaces': 'error' },
  },
  {
    // G11: no safety or liveness decision rests on the wall clock (docs/guarantees.md, G11; the clocks are src/wire/calls/clock.ts).
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        {
          object: 'Date',
          property: 'now',
          message:
            'durations, timeouts, idle times and lags use monotonicNowMs() (src/wire/calls/clock.ts); a timestamp that is stored or shown may read Date.now() under an eslint-disable comment saying so',
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'new Date() reads the wall clock: see the Date.now() rule (monotonicNowMs for durations)',
        },
      ],
    },
  },
  {
    // Size: a file is at most 600 lines as wc -l counts them (comments and blank lines included, so the lint and a
    // reader's count agree); a hand-written function at most 100, blank lines and comments aside. Generated code is ignored above.
    files: ['src/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 600, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 100, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
);
