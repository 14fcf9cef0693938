/**
 * Which files of the home a notebook's code reads: the paths in its string
 * literals (`pd.read_csv('data/iris.csv')`, `open("x.txt")`,
 * `glob('data/*.csv')`), the local modules it imports (`import helper`), and
 * the files named on `%run` / `!python` lines. Relative paths are resolved
 * from the notebook's folder (where its kernel starts), as Python would.
 *
 * This only proposes candidates: the home is asked which exist (many strings
 * are not files), and the user sees and may change the selection.
 */

import { isCovered } from '../files/selection';
import { IFileEntry } from '../apiTypes';

/** At most this many candidates are asked about. */
export const MAX_CANDIDATES = 200;

const PREFIX = /^[rRbBuUfF]{0,2}$/;
const URL_LIKE = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//;
const GLOB = /[*?[\]]/;

/** The string literals of Python source, without their quotes (f-strings with `{` left out). */
export function stringLiterals(source: string): string[] {
  const found: string[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    if (c === '#') {
      const end = source.indexOf('\n', i);
      i = end < 0 ? source.length : end + 1;
      continue;
    }
    if (c !== '"' && c !== "'") {
      i += 1;
      continue;
    }
    // The prefix letters just before the quote: r'', f"", rb''...
    let start = i;
    while (start > 0 && /[a-zA-Z]/.test(source[start - 1])) {
      start -= 1;
    }
    const prefix = source.slice(start, i);
    const formatted = PREFIX.test(prefix) && /[fF]/.test(prefix);
    const raw = PREFIX.test(prefix) && /[rR]/.test(prefix);
    const triple = source.startsWith(c.repeat(3), i);
    const quote = triple ? c.repeat(3) : c;
    let j = i + quote.length;
    let text = '';
    let closed = false;
    while (j < source.length) {
      if (source.startsWith(quote, j)) {
        closed = true;
        break;
      }
      const d = source[j];
      if (d === '\\' && j + 1 < source.length) {
        text += raw ? d + source[j + 1] : source[j + 1];
        j += 2;
        continue;
      }
      if (d === '\n' && !triple) {
        break;
      }
      text += d;
      j += 1;
    }
    if (closed && !(formatted && text.includes('{'))) {
      found.push(text);
    }
    i = closed ? j + quote.length : j + 1;
  }
  return found;
}

/** The modules a cell imports (`import a.b as c`, `from d import e`): ["a/b", "d"]. */
export function importedModules(source: string): string[] {
  const found: string[] = [];
  for (const line of source.split('\n')) {
    const from = /^\s*from\s+([A-Za-z_][\w.]*)\s+import\b/.exec(line);
    if (from) {
      found.push(from[1].replace(/\./g, '/'));
      continue;
    }
    const plain = /^\s*import\s+(.+)$/.exec(line);
    if (plain) {
      for (const part of plain[1].split(',')) {
        const name = part.trim().split(/\s+/)[0];
        if (/^[A-Za-z_][\w.]*$/.test(name ?? '')) {
          found.push(name.replace(/\./g, '/'));
        }
      }
    }
  }
  return found;
}

/** Words that look like files on `%run x.py`, `!python train.py --data d.csv` lines. */
export function commandLineFiles(source: string): string[] {
  const found: string[] = [];
  for (const line of source.split('\n')) {
    const trimmed = line.trim();
    if (!trimmed.startsWith('%') && !trimmed.startsWith('!')) {
      continue;
    }
    for (const word of trimmed.slice(1).split(/\s+/).slice(1)) {
      const clean = word.replace(/^["']|["']$/g, '');
      if (/[./]/.test(clean) && !clean.startsWith('-')) {
        found.push(clean);
      }
    }
  }
  return found;
}

/** A literal that could be a relative path of the home; null for anything else. */
export function pathFromLiteral(text: string): string | null {
  let value = text.trim();
  if (!value || value.length > 255 || /[\n\r\t\0]/.test(value)) {
    return null;
  }
  if (URL_LIKE.test(value) || value.startsWith('/')) {
    return null;
  }
  if (/\s/.test(value) && !/[./]/.test(value)) {
    return null; // a sentence, not a file name
  }
  if (GLOB.test(value)) {
    // glob('data/*.csv'): the folder before the first wildcard.
    const parts = value.split('/');
    const fixed = parts.slice(
      0,
      parts.findIndex(p => GLOB.test(p))
    );
    if (!fixed.length) {
      return null;
    }
    value = fixed.join('/');
  }
  return value.startsWith('~/') ? value : value.replace(/\/+$/, '');
}

/**
 * `relative` resolved from the folder `base` of the home, normalised; null
 * when it leaves the home. "~/x" is relative to the home itself.
 */
export function resolveInHome(base: string, relative: string): string | null {
  const fromHome = relative.startsWith('~/');
  const parts = (fromHome ? [] : base.split('/')).filter(Boolean);
  for (const part of (fromHome ? relative.slice(2) : relative).split('/')) {
    if (part === '' || part === '.') {
      continue;
    }
    if (part === '..') {
      if (!parts.length) {
        return null;
      }
      parts.pop();
      continue;
    }
    parts.push(part);
  }
  return parts.length ? parts.join('/') : null;
}

/** The folder of a path of the home ('' for the home itself). */
function folderOf(path: string): string {
  const index = path.lastIndexOf('/');
  return index < 0 ? '' : path.slice(0, index);
}

/**
 * The paths of the home the code of a notebook may read, resolved from its
 * folder, first seen first, without the notebook itself.
 */
export function candidatePaths(
  notebookPath: string,
  sources: ReadonlyArray<string>
): string[] {
  const base = folderOf(notebookPath);
  const seen = new Set<string>();
  const add = (relative: string | null): void => {
    const resolved = relative === null ? null : resolveInHome(base, relative);
    if (resolved && resolved !== notebookPath && seen.size < MAX_CANDIDATES) {
      seen.add(resolved);
    }
  };
  for (const source of sources) {
    stringLiterals(source).forEach(text => add(pathFromLiteral(text)));
    commandLineFiles(source).forEach(word => add(pathFromLiteral(word)));
    for (const module of importedModules(source)) {
      add(`${module}.py`);
      add(module.split('/')[0]); // a package: its folder
    }
  }
  return Array.from(seen);
}

/** Why a path is preselected. */
export type SuggestionReason = 'notebook' | 'reads' | 'template';

/** A preselected file or folder of the home. */
export interface ISuggestion {
  path: string;
  type: 'file' | 'directory';
  size: number;
  files: number;
  why: SuggestionReason;
}

/**
 * The suggestions from what exists (`entries`): the notebook first, then what
 * its code reads, then the template's files; excluded entries and paths inside
 * another suggested folder left out.
 */
export function mergeSuggestions(
  notebookPath: string | null,
  reads: ReadonlyArray<string>,
  template: ReadonlyArray<string>,
  entries: ReadonlyArray<IFileEntry>
): ISuggestion[] {
  const existing = new Map(entries.map(e => [e.path, e]));
  const ordered: Array<[string, SuggestionReason]> = [
    ...(notebookPath
      ? [[notebookPath, 'notebook'] as [string, SuggestionReason]]
      : []),
    ...reads.map(p => [p, 'reads'] as [string, SuggestionReason]),
    ...template.map(p => [p, 'template'] as [string, SuggestionReason])
  ];
  const chosen: ISuggestion[] = [];
  for (const [path, why] of ordered) {
    const entry = existing.get(path);
    if (!entry || entry.excluded || chosen.some(c => c.path === path)) {
      continue;
    }
    chosen.push({
      path,
      type: entry.type,
      size: entry.size,
      files: entry.files,
      why
    });
  }
  const folders = chosen.filter(c => c.type === 'directory').map(c => c.path);
  return chosen.filter(
    c =>
      !folders.some(folder => folder !== c.path && isCovered(c.path, [folder]))
  );
}
