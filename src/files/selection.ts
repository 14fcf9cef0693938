/**
 * Pure helpers of the file picker (templates, submissions): path selections,
 * exclusion patterns and their sizes.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { formatBytes } from '../format';
import { IFileEntry } from '../apiTypes';

/* ------------------------------------------------------------------ paths */

/**
 * A path of the home in one spelling: no leading "./" or "/", no trailing or
 * doubled "/", no "." parts; '' for the home itself or for anything that
 * climbs out of it (a ".." part).
 */
export function normalizePath(path: string): string {
  const parts: string[] = [];
  for (const part of path.replace(/\\/g, '/').split('/')) {
    const trimmed = part.trim() === '' ? '' : part;
    if (trimmed === '' || trimmed === '.') {
      continue;
    }
    if (trimmed === '..') {
      return '';
    }
    parts.push(trimmed);
  }
  return parts.join('/');
}

/** The folders above a path, outermost first: "a/b/c" → ["a", "a/b"]. */
export function ancestorsOf(path: string): string[] {
  const parts = normalizePath(path).split('/');
  const result: string[] = [];
  for (let i = 1; i < parts.length; i++) {
    result.push(parts.slice(0, i).join('/'));
  }
  return result;
}

/** A folder's entries as the picker lists them: folders first, then by name. */
export function sortEntries(entries: ReadonlyArray<IFileEntry>): IFileEntry[] {
  return [...entries].sort((a, b) =>
    a.type !== b.type
      ? a.type === 'directory'
        ? -1
        : 1
      : a.name.localeCompare(b.name)
  );
}

/** Whether `path` lies inside the folder `folder` (not the folder itself). */
export function isInside(path: string, folder: string): boolean {
  return folder !== '' && path.startsWith(`${folder}/`);
}

/**
 * A selection in one spelling: every path normalised, no duplicates, nothing
 * that a chosen folder already covers, sorted. The home itself ('') and paths
 * that climb out of it are dropped.
 */
export function normalizeSelection(paths: ReadonlyArray<string>): string[] {
  const unique = Array.from(
    new Set(paths.map(normalizePath).filter(p => p !== ''))
  ).sort();
  return unique.filter(p => !unique.some(other => isInside(p, other)));
}

/** Whether a path is chosen, itself or through a folder above it. */
export function isCovered(
  path: string,
  selection: ReadonlyArray<string>
): boolean {
  const target = normalizePath(path);
  return selection.some(p => p === target || isInside(target, p));
}

/** What a checkbox of the picker shows. */
export type CheckState = 'checked' | 'partial' | 'unchecked';

/** Checked when covered, partial when something inside a folder is chosen. */
export function checkState(
  path: string,
  selection: ReadonlyArray<string>
): CheckState {
  if (isCovered(path, selection)) {
    return 'checked';
  }
  const target = normalizePath(path);
  return selection.some(p => isInside(p, target)) ? 'partial' : 'unchecked';
}

/** Choose a path: a folder covers (and replaces) what was chosen inside it. */
export function selectPath(
  selection: ReadonlyArray<string>,
  path: string
): string[] {
  return normalizeSelection([...selection, path]);
}

/** The loaded listings of the picker, by folder. */
export type ChildrenOf = (
  folder: string
) => ReadonlyArray<IFileEntry> | undefined;

/**
 * Leave a path out. When a folder above it was chosen, that folder is
 * replaced by its other entries (down to the path), so the rest stays chosen;
 * excluded entries are not added. If a listing on the way is not loaded, the
 * selection is returned as it was (the picker only shows loaded entries).
 */
export function deselectPath(
  selection: ReadonlyArray<string>,
  path: string,
  childrenOf: ChildrenOf,
  isExcluded: (entry: IFileEntry) => boolean = () => false
): string[] {
  const target = normalizePath(path);
  const current = normalizeSelection(selection);
  if (!target) {
    return current;
  }
  const kept = current.filter(p => p !== target && !isInside(p, target));
  const chain = [...ancestorsOf(target), target];
  const coverIndex = chain.findIndex(a => kept.includes(a));
  if (coverIndex < 0) {
    return kept;
  }
  const result = kept.filter(p => p !== chain[coverIndex]);
  for (let i = coverIndex; i < chain.length - 1; i++) {
    const children = childrenOf(chain[i]);
    if (!children) {
      return current;
    }
    for (const child of children) {
      const childPath = normalizePath(child.path);
      if (childPath !== chain[i + 1] && !isExcluded(child)) {
        result.push(childPath);
      }
    }
  }
  return normalizeSelection(result);
}

/* --------------------------------------------------------------- patterns */

/** A glob pattern as a regular expression: `*`, `?`, `[abc]`, `[!abc]`. */
export function globToRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*') {
      source += '.*';
    } else if (c === '?') {
      source += '.';
    } else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) {
        source += '\\[';
        continue;
      }
      let body = pattern.slice(i + 1, end);
      const negate = body.startsWith('!');
      if (negate) {
        body = body.slice(1);
      }
      source += `[${negate ? '^' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`;
      i = end;
    } else {
      source += c.replace(/[.+^${}()|\\/\]]/g, '\\$&');
    }
  }
  return new RegExp(`^${source}$`);
}

/**
 * Whether a pattern leaves an entry out, as the server decides it
 * (`cgu_lab.core.selection.excluded`): the pattern is matched against the
 * path from the home and against each of its parts, so ".ipynb_checkpoints"
 * and "*.pyc" match anywhere and "data/raw/*" matches below data/raw.
 */
export function matchesPattern(
  pattern: string,
  entry: Pick<IFileEntry, 'path'>
): boolean {
  const p = pattern.trim();
  if (!p) {
    return false;
  }
  const re = globToRegExp(p);
  const path = normalizePath(entry.path);
  return re.test(path) || path.split('/').some(part => re.test(part));
}

/**
 * Why an entry is left out, or null when it is not.
 *
 * @param patterns the patterns the request sends (the template dialog's
 *   editable list), or null when the platform's own patterns apply (a
 *   submission): then the server's `excluded` flag decides.
 * @param defaults the platform's patterns (`excluded_patterns`).
 */
export function exclusionReason(
  entry: IFileEntry,
  patterns: ReadonlyArray<string> | null,
  defaults: ReadonlyArray<string>,
  trans: TranslationBundle
): string | null {
  const matches = (hit: string) => trans.__('excluded: matches "%1"', hit);
  if (patterns === null) {
    if (!entry.excluded) {
      return null;
    }
    const hit = defaults.find(p => matchesPattern(p, entry));
    return hit ? matches(hit) : trans.__('excluded by the platform');
  }
  const hit = patterns.find(p => matchesPattern(p, entry));
  if (hit) {
    return matches(hit);
  }
  if (entry.excluded && defaults.every(d => patterns.includes(d))) {
    return trans.__('excluded by the platform');
  }
  return null;
}

/**
 * Add a pattern to the list: trimmed, not empty, not twice. Returns the new
 * list, or a sentence saying why it cannot be added.
 */
export function addPattern(
  patterns: ReadonlyArray<string>,
  text: string,
  trans: TranslationBundle
): string[] | string {
  const pattern = text.trim();
  if (!pattern) {
    return trans.__('Type a pattern first, e.g. *.pyc or data/raw.');
  }
  if (pattern.split('/').includes('..')) {
    return trans.__('A pattern cannot contain "..".');
  }
  if (patterns.includes(pattern)) {
    return trans.__('"%1" is already in the list.', pattern);
  }
  return [...patterns, pattern];
}

/* ----------------------------------------------------------------- totals */

/** What the picker knows about the home so far. */
export interface IPickerIndex {
  /** The entry at a path, once its folder's listing is loaded. */
  entry(path: string): IFileEntry | undefined;
  /** A folder's loaded listing. */
  children: ChildrenOf;
}

/** The size of a selection. */
export interface ISelectionTotals {
  bytes: number;
  files: number;
  /** Chosen paths whose folder is not loaded yet (size unknown). */
  unknown: string[];
  /** Chosen paths that are themselves excluded (not sent, not counted). */
  excluded: string[];
}

/**
 * Add up a selection. A chosen folder counts what it contains: its loaded
 * entries one by one (leaving out the excluded ones), or the server's total
 * when it is not loaded.
 */
export function selectionTotals(
  selection: ReadonlyArray<string>,
  index: IPickerIndex,
  isExcluded: (entry: IFileEntry) => boolean
): ISelectionTotals {
  const totals: ISelectionTotals = {
    bytes: 0,
    files: 0,
    unknown: [],
    excluded: []
  };
  const add = (entry: IFileEntry): void => {
    const children =
      entry.type === 'directory' ? index.children(entry.path) : undefined;
    if (children) {
      for (const child of children) {
        if (!isExcluded(child)) {
          add(child);
        }
      }
      return;
    }
    totals.bytes += Math.max(0, entry.size || 0);
    totals.files += Math.max(0, entry.files || 0);
  };
  for (const path of normalizeSelection(selection)) {
    const entry = index.entry(path);
    if (!entry) {
      totals.unknown.push(path);
    } else if (isExcluded(entry)) {
      totals.excluded.push(path);
    } else {
      add(entry);
    }
  }
  return totals;
}

/** The paths to send: the selection without the entries that are excluded. */
export function effectivePaths(
  selection: ReadonlyArray<string>,
  index: IPickerIndex,
  isExcluded: (entry: IFileEntry) => boolean
): string[] {
  return normalizeSelection(selection).filter(path => {
    const entry = index.entry(path);
    return !entry || !isExcluded(entry);
  });
}

/** Whether a size is over a limit (a limit of 0 or less means none). */
export function isOverLimit(bytes: number, maxBytes: number | null): boolean {
  return maxBytes !== null && maxBytes > 0 && bytes > maxBytes;
}

/** "1 file", "3 files". */
export function filesText(count: number, trans: TranslationBundle): string {
  return trans._n('%1 file', '%1 files', count);
}

/**
 * The picker's summary line: "Selected: 3 files, 1.2 MiB of 100.0 MiB allowed",
 * with what is not known yet.
 */
export function totalsText(
  totals: ISelectionTotals,
  maxBytes: number | null,
  trans: TranslationBundle
): string {
  const size =
    maxBytes !== null && maxBytes > 0
      ? trans.__(
          '%1 of %2 allowed',
          formatBytes(totals.bytes),
          formatBytes(maxBytes)
        )
      : formatBytes(totals.bytes);
  const text = trans.__(
    'Selected: %1, %2',
    filesText(totals.files, trans),
    size
  );
  return totals.unknown.length
    ? trans.__('%1 (+ %2 not measured yet)', text, totals.unknown.length)
    : text;
}

/** The warning when a selection is too large; null when it fits. */
export function overLimitText(
  bytes: number,
  maxBytes: number | null,
  what: string,
  trans: TranslationBundle
): string | null {
  if (!isOverLimit(bytes, maxBytes)) {
    return null;
  }
  return trans.__(
    'Too large: the selection is %1, over the %2 limit of %3. Leave out large files (data sets, checkpoints, outputs) or add an excluded pattern.',
    formatBytes(bytes),
    formatBytes(maxBytes as number),
    what
  );
}
