#!/usr/bin/env node
// Writes src/version.ts from package.json's version, so that the lab extension
// knows its release at build time (the server extension reports its own in the
// handshake). `--check` fails when the file does not match package.json.
import { readFileSync, writeFileSync } from 'node:fs';

const root = new URL('..', import.meta.url);
const { version } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
const target = new URL('src/version.ts', root);
const text = `// Generated from package.json by scripts/version-ts.mjs (jlpm build:version); do not edit.

/** The release of this lab extension, fixed when it is built. */
export const LAB_EXTENSION_VERSION = '${version}';
`;

let current = null;
try {
  current = readFileSync(target, 'utf8');
} catch {
  // not written yet
}
if (process.argv.includes('--check')) {
  if (current !== text) {
    console.error(`src/version.ts does not say ${version}: run "jlpm build:version"`);
    process.exit(1);
  }
} else if (current !== text) {
  writeFileSync(target, text);
}
