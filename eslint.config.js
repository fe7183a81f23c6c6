// Lint: typescript-eslint's recommended rules plus Nx module boundaries. Tags (project.json):
//   type:app       may use every lib
//   type:domain    the fire domain (libs/fire): composes data and transport libs
//   type:data / type:transport  infrastructure clients; may use util
//   type:util      plain code (config, contracts); may use util
//   type:testing   test helpers; only tests import it
const nx = require('@nx/eslint-plugin');
const tseslint = require('typescript-eslint');

module.exports = [
  { ignores: ['**/dist', '**/node_modules', '.local/**', 'coverage/**', '**/*.js'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [],
          depConstraints: [
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:domain', 'type:data', 'type:transport', 'type:util', 'type:testing'] },
            { sourceTag: 'type:domain', onlyDependOnLibsWithTags: ['type:data', 'type:transport', 'type:util', 'type:testing'] },
            { sourceTag: 'type:data', onlyDependOnLibsWithTags: ['type:util', 'type:testing'] },
            { sourceTag: 'type:transport', onlyDependOnLibsWithTags: ['type:transport', 'type:util', 'type:testing'] },
            { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util', 'type:testing'] },
            { sourceTag: 'type:testing', onlyDependOnLibsWithTags: [] },
            { sourceTag: 'type:e2e', onlyDependOnLibsWithTags: ['type:testing'] },
          ],
        },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
];
