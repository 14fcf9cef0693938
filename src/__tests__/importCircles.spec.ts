/// <reference types="node" />
/**
 * No import circles among the lab extension's modules (issue 24 item 2), as
 * tests/test_import_circles.py checks cgu_lab's: two files that import each
 * other, even for a type only, cannot be read, moved or deleted apart.
 * TypeScript's own pre-processor lists each file's imports and re-exports
 * (type-only ones included), so nothing is compiled or loaded to find them.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

const SRC = path.resolve(__dirname, '..');

/** Each module's text by its name: its path under `root`, without extension. */
function modulesOf(root: string): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (folder: string): void => {
    for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== '__tests__') {
          walk(full);
        }
      } else if (/\.tsx?$/.test(entry.name)) {
        const name = path
          .relative(root, full)
          .split(path.sep)
          .join('/')
          .replace(/(\.d)?\.tsx?$/, '');
        found.set(name, fs.readFileSync(full, 'utf-8'));
      }
    }
  };
  walk(root);
  return found;
}

/** Which modules each module imports (relative imports that name one of them). */
function importGraph(modules: Map<string, string>): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const [name, text] of modules) {
    const targets = new Set<string>();
    for (const imported of ts.preProcessFile(text, true, true).importedFiles) {
      if (!imported.fileName.startsWith('.')) {
        continue;
      }
      const target = path.posix.join(
        path.posix.dirname(name),
        imported.fileName.replace(/\.(js|tsx?)$/, '')
      );
      for (const candidate of [target, `${target}/index`]) {
        if (modules.has(candidate) && candidate !== name) {
          targets.add(candidate);
          break;
        }
      }
    }
    graph.set(name, targets);
  }
  return graph;
}

/** The groups of modules that reach one another (each a circle), sorted. */
function circles(graph: Map<string, Set<string>>): string[][] {
  const reach = new Map<string, Set<string>>();
  for (const start of graph.keys()) {
    const seen = new Set<string>();
    const pending = [start];
    while (pending.length) {
      for (const target of graph.get(pending.pop()!) ?? []) {
        if (!seen.has(target)) {
          seen.add(target);
          pending.push(target);
        }
      }
    }
    reach.set(start, seen);
  }
  const groups = new Map<string, string[]>();
  for (const start of graph.keys()) {
    const group = [...reach.get(start)!]
      .filter(other => reach.get(other)!.has(start))
      .sort();
    if (group.length > 1) {
      groups.set(group.join(' '), group);
    }
  }
  return [...groups.values()].sort((a, b) => a[0].localeCompare(b[0]));
}

describe('import circles', () => {
  it('finds none among the modules of src/', () => {
    const graph = importGraph(modulesOf(SRC));
    expect(graph.size).toBeGreaterThan(50); // the walk found src/, not an empty folder
    expect(graph.get('share/plugin')).toContain('tokens'); // and read its imports
    expect(circles(graph)).toEqual([]);
  });

  it('counts type-only imports, re-exports and folders by their index', () => {
    const modules = new Map<string, string>([
      // a type-only back-reference: a circle
      ['api', "import type { Token } from './tokens';\n"],
      ['tokens', "import { IShape } from './api';\n"],
      // a re-export and a folder's index: a circle
      ['panel/index', "export { Panel } from '../widgets';\n"],
      ['widgets', "import { Panel } from './panel';\n"],
      // imports one way only: no circle
      [
        'plugin',
        "import { Panel } from './panel';\nimport '@lumino/widgets';\n"
      ]
    ]);
    expect(circles(importGraph(modules))).toEqual([
      ['api', 'tokens'],
      ['panel/index', 'widgets']
    ]);
  });
});
