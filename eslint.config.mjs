// ESLint (flat config) for the lab extension's TypeScript and the controller's page scripts.
import js from '@eslint/js';
import tsPlugin from '@typescript-eslint/eslint-plugin';
import tsParser from '@typescript-eslint/parser';
import globals from 'globals';

export default [
  {
    // Generated from docs/openapi.json by `jlpm openapi:types`.
    ignores: ['src/apiSchema.d.ts']
  },
  {
    files: ['src/**/*.ts', 'src/**/*.tsx'],
    languageOptions: {
      parser: tsParser,
      parserOptions: {
        project: ['./tsconfig.json', './tsconfig.test.json'],
        sourceType: 'module'
      }
    },
    plugins: { '@typescript-eslint': tsPlugin },
    rules: {
      ...tsPlugin.configs['eslint-recommended'].overrides[0].rules,
      ...tsPlugin.configs.recommended.rules,
      '@typescript-eslint/naming-convention': [
        'error',
        {
          selector: 'interface',
          format: ['PascalCase'],
          custom: { regex: '^I[A-Z]', match: true }
        }
      ],
      '@typescript-eslint/no-unused-vars': ['warn', { args: 'none' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-namespace': 'off',
      eqeqeq: 'error',
      curly: ['error', 'all'],
      'prefer-arrow-callback': 'error'
    }
  },
  {
    // The pages' plain ES modules, served as they are (no build step).
    files: ['cgu_lab/controller/static/js/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: globals.browser
    },
    rules: {
      ...js.configs.recommended.rules,
      'no-unused-vars': ['error', { args: 'none' }],
      // `x == null` is the pages' one way to say "null or undefined".
      eqeqeq: ['error', 'smart'],
      // One-line guards (`if (!rows.length) return;`) stay on one line.
      curly: ['error', 'multi-line'],
      'prefer-arrow-callback': 'error'
    }
  }
];
