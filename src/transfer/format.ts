/**
 * Pure helpers of the file manager: paths, chunks and the resume rule, the
 * download link, and the sentences of the progress panel. Nothing here
 * touches the page or the server, so all of it is unit-tested.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { formatBytes } from '../format';

/** Archives the server can extract (cgu_lab/notebook/transfer/extract.py). */
export const ARCHIVE_SUFFIXES = [
  '.zip',
  '.tar',
  '.tar.gz',
  '.tgz',
  '.tar.bz2',
  '.tbz2',
  '.tar.xz',
  '.txz'
];

/** Whether a file name is one of `ARCHIVE_SUFFIXES`. */
export function isArchive(name: string): boolean {
  const lower = name.toLowerCase();
  return ARCHIVE_SUFFIXES.some(suffix => lower.endsWith(suffix));
}

/** The name without its archive suffix: the folder a conflict suggests. */
export function archiveStem(name: string): string {
  const lower = name.toLowerCase();
  const suffix = [...ARCHIVE_SUFFIXES]
    .sort((a, b) => b.length - a.length)
    .find(s => lower.endsWith(s));
  return suffix ? name.slice(0, -suffix.length) || 'archive' : name;
}

/** Join folder and name with one '/', no leading or trailing one. */
export function joinPath(...parts: string[]): string {
  return parts
    .join('/')
    .split('/')
    .filter(part => part !== '' && part !== '.')
    .join('/');
}

/**
 * The folders an upload must create, parents before children: every folder on
 * the way to each file, and the empty folders of the tree.
 */
export function foldersOf(
  files: ReadonlyArray<string>,
  emptyFolders: ReadonlyArray<string> = []
): string[] {
  const folders = new Set<string>();
  const add = (path: string) => {
    const parts = path.split('/');
    for (let depth = 1; depth <= parts.length; depth++) {
      folders.add(parts.slice(0, depth).join('/'));
    }
  };
  for (const file of files) {
    const parts = file.split('/');
    if (parts.length > 1) {
      add(parts.slice(0, -1).join('/'));
    }
  }
  emptyFolders.forEach(add);
  return [...folders].sort(
    (a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b)
  );
}

/** How many chunks a file of `size` bytes is sent in (one for an empty file). */
export function chunkCount(size: number, chunkSize: number): number {
  return Math.max(1, Math.ceil(size / chunkSize));
}

/**
 * The contents API's number for chunk `index` (0-based) of `count`: 1 writes
 * the file, 2..n-1 append, -1 appends the last one and ends the upload.
 */
export function chunkNumber(index: number, count: number): number {
  return index === count - 1 ? -1 : index + 1;
}

/**
 * After a failed chunk, how many chunks the server holds, from the size it
 * reports: the chunk that failed (index `next`) may or may not have landed.
 * Anything else (a size that is no chunk boundary, the file gone) starts the
 * file over, which chunk 1 does by rewriting it.
 */
export function chunksHeld(
  heldSize: number | null,
  next: number,
  size: number,
  chunkSize: number
): number {
  if (next === 0 || heldSize === null) {
    return 0; // nothing to build on: chunk 1 rewrites the file whatever is there
  }
  if (heldSize === next * chunkSize) {
    return next; // the failed chunk did not land: send it again
  }
  if (heldSize === Math.min((next + 1) * chunkSize, size)) {
    return next + 1; // it landed, only the answer was lost
  }
  return 0;
}

/** The download link of a zip of these paths (relative to the home). */
export function zipUrl(baseUrl: string, paths: ReadonlyArray<string>): string {
  const query = paths.map(p => `path=${encodeURIComponent(p)}`).join('&');
  return `${baseUrl.replace(/\/?$/, '/')}cgu-lab/transfer/zip?${query}`;
}

/** "12.0 MiB of 40.0 MiB · 3 of 20 files". */
export function progressText(
  trans: TranslationBundle,
  sent: number,
  total: number,
  doneFiles: number,
  files: number
): string {
  return trans.__(
    '%1 of %2 · %3 of %4 files',
    formatBytes(sent),
    formatBytes(total),
    doneFiles,
    files
  );
}

/** "2.5 MiB/s", from bytes over milliseconds; "–" before there is a rate. */
export function rateText(bytes: number, milliseconds: number): string {
  if (milliseconds < 250 || bytes <= 0) {
    return '–';
  }
  return `${formatBytes((bytes * 1000) / milliseconds)}/s`;
}

/** The allowance sentence the panel shows before an upload. */
export function allowanceText(
  trans: TranslationBundle,
  used: number | null,
  allowance: number | null
): string {
  if (allowance === null || used === null) {
    return '';
  }
  return trans.__(
    '%1 of your %2 disk allowance used',
    formatBytes(used),
    formatBytes(allowance)
  );
}
