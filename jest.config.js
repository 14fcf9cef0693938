/**
 * Two kinds of tests: `unit` (src/__tests__/*.spec.ts) tests pure helpers and
 * models in Node; `widgets` (src/__tests__/*.spec.tsx) renders the dialogs'
 * React bodies in a DOM with JupyterLab's own test setup
 * (@jupyterlab/testutils), which loads JupyterLab's ES modules through Babel.
 */
const jupyterLabConfig = require('@jupyterlab/testutils/lib/jest-config');

const esModules = [
  '@codemirror',
  '@jupyter',
  '@jupyterlab',
  '@lumino',
  '@marijn',
  '@microsoft',
  'color',
  'exenv-es6',
  'lib0',
  'marked',
  'nanoid',
  'vscode-ws-jsonrpc',
  'y-protocols',
  'y-websocket',
  'yjs'
].join('|');

const widgets = jupyterLabConfig(__dirname);
delete widgets.reporters;
delete widgets.coverageReporters;
delete widgets.coverageDirectory;
const { testTimeout } = widgets;
delete widgets.testTimeout;

module.exports = {
  testTimeout,
  projects: [
    {
      displayName: 'unit',
      preset: 'ts-jest',
      testEnvironment: 'node',
      testMatch: ['<rootDir>/src/__tests__/**/*.spec.ts']
    },
    {
      ...widgets,
      displayName: 'widgets',
      rootDir: __dirname,
      testRegex: 'src/__tests__/.*\\.spec\\.tsx$',
      transformIgnorePatterns: [`/node_modules/(?!${esModules}).+`]
    }
  ]
};
