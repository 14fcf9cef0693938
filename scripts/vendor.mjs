#!/usr/bin/env node
// Copies the browser libraries that the controller's pages load as they are (no bundler
// on that side) from node_modules into cgu_lab/controller/static/vendor, where the
// controller serves them and the Python package ships them: Chart.js for the monitoring
// page, noVNC for a VM notebook's console. Run by `jlpm build:vendor` (part of
// build:lib), so an upgrade in yarn.lock reaches the pages with the next build.
import { copyFileSync, cpSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// Resolved as the repository's own code would: from its package.json.
const require = createRequire(join(root, 'package.json'));
const target = join(root, 'cgu_lab', 'controller', 'static', 'vendor');
mkdirSync(target, { recursive: true });

// Chart.js: its one-file build, and the source map that browsers' tools ask for.
const chartJs = dirname(require.resolve('chart.js'));
for (const file of ['chart.umd.min.js', 'chart.umd.min.js.map']) {
  copyFileSync(join(chartJs, file), join(target, file));
}

// noVNC: its ES modules (core/ and the vendored pako under vendor/) and its licence.
// The package's entry point is core/rfb.js, two levels below the package itself.
const noVnc = dirname(dirname(require.resolve('@novnc/novnc')));
for (const part of ['core', 'vendor', 'LICENSE.txt']) {
  cpSync(join(noVnc, part), join(target, 'novnc', part), { recursive: true });
}
