/**
 * The file picker's state, without any DOM: the folders listed so far (a
 * folder is listed when it is opened), the selection, the excluded patterns
 * (editable for templates) and the size limit, and what each entry shows
 * (`rowState`). The components (tree.tsx, patterns.tsx) render it; the
 * Submit and Save-as-template dialogs read `paths`, `patterns`, `totals`.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { errorMessage } from '../api';
import { formatBytes } from '../format';
import { FormModel } from '../useModel';
import {
  addPattern,
  ancestorsOf,
  CheckState,
  checkState,
  deselectPath,
  effectivePaths,
  exclusionReason,
  filesText,
  IPickerIndex,
  isOverLimit,
  ISelectionTotals,
  normalizePath,
  normalizeSelection,
  overLimitText,
  selectionTotals,
  selectPath,
  sortEntries,
  totalsText
} from './selection';
import { IFileEntry, IFileListing } from '../apiTypes';

/** What the picker needs. */
export interface IFilePickerOptions {
  /** The paths chosen at the start (e.g. the open notebook). */
  initial?: ReadonlyArray<string>;
  /** The size limit in bytes; null for none. */
  maxBytes: number | null;
  /** What the limit belongs to, for the warning: "a template". */
  limitWhat: string;
  /** Whether the excluded patterns can be edited (templates). */
  editablePatterns: boolean;
  /** The accessible name of the tree: "Files to include". */
  label: string;
  /** `GET files`; replaceable in tests. */
  fetch?: (path: string) => Promise<IFileListing>;
  trans: TranslationBundle;
}

/** What one entry of the tree shows. */
export interface IRowState {
  /** Left out: by a pattern, by the platform, or through a folder above. */
  excluded: boolean;
  /** The checkbox: its state, or 'excluded' (unchecked and disabled). */
  state: CheckState | 'excluded';
  /** Why it is left out; '' when it is not. */
  reason: string;
  /** Its size (a folder: what it holds with the current patterns). */
  size: string;
  /** A folder's file count; '' for a file. */
  count: string;
}

export class PickerModel extends FormModel {
  constructor(
    options: IFilePickerOptions & {
      fetch: (path: string) => Promise<IFileListing>;
    }
  ) {
    super();
    this.options = options;
    this.trans = options.trans;
    this._fetch = options.fetch;
    this._maxBytes = options.maxBytes;
    this._limitWhat = options.limitWhat;
    this._selection = normalizeSelection(options.initial ?? []);
  }

  readonly options: IFilePickerOptions;
  readonly trans: TranslationBundle;

  /* ------------------------------------------------------------- state */

  /** A folder's entries once listed ('' is the home). */
  listing(folder: string): ReadonlyArray<IFileEntry> | undefined {
    return this._listings.get(folder);
  }
  isOpen(folder: string): boolean {
    return this._open.has(folder);
  }
  /** What went wrong while listing a folder; '' when nothing. */
  get status(): string {
    return this._status;
  }
  /** The paths to send: the selection without excluded entries. */
  get paths(): string[] {
    return effectivePaths(this._selection, this._index, this._isExcluded);
  }
  /** The excluded patterns to send (templates). */
  get patterns(): string[] {
    return [...this._patterns];
  }
  /** The size of the selection. */
  get totals(): ISelectionTotals {
    return selectionTotals(this._selection, this._index, this._isExcluded);
  }
  get overLimit(): boolean {
    return isOverLimit(this.totals.bytes, this._maxBytes);
  }
  /** "Selected: 3 files, 1.2 MiB of 100.0 MiB allowed". */
  get summary(): string {
    return totalsText(this.totals, this._maxBytes, this.trans);
  }
  /** The warning when the selection is too large; null when it fits. */
  get warning(): string | null {
    return overLimitText(
      this.totals.bytes,
      this._maxBytes,
      this._limitWhat,
      this.trans
    );
  }
  /** The pattern being typed, and why it could not be added. */
  get draft(): string {
    return this._draft;
  }
  get patternError(): string {
    return this._patternError;
  }

  /** What an entry shows now. */
  rowState(entry: IFileEntry): IRowState {
    const path = normalizePath(entry.path);
    const reason = this._reasonOf(entry);
    const excludedAbove = ancestorsOf(path).some(folder => {
      const above = this._entries.get(folder);
      return !!above && this._isExcluded(above);
    });
    const excluded = reason !== null || excludedAbove;
    let size = formatBytes(entry.size);
    let count = '';
    if (entry.type === 'directory') {
      // An excluded folder contributes nothing; a listed one is added up
      // with the current patterns.
      const inside = excluded
        ? null
        : selectionTotals([path], this._index, this._isExcluded);
      size = inside ? formatBytes(inside.bytes) : '';
      count = inside ? filesText(inside.files, this.trans) : '';
    }
    return {
      excluded,
      state: excluded ? 'excluded' : checkState(path, this._selection),
      reason: reason ?? '',
      size,
      count
    };
  }

  /* ------------------------------------------------------------ changes */

  /** List the home and open the folders that lead to the initial paths. */
  async start(): Promise<void> {
    await this._load('');
    const folders = new Set<string>();
    for (const path of this._selection) {
      ancestorsOf(path).forEach(folder => folders.add(folder));
    }
    for (const folder of Array.from(folders).sort()) {
      await this.expand(folder, true);
    }
    this.emit();
  }

  /** Open or close a folder; it is listed the first time it opens. */
  async expand(folder: string, open: boolean): Promise<void> {
    if (this._entries.get(folder)?.type !== 'directory') {
      return; // not in the home (any more)
    }
    if (open) {
      this._open.add(folder);
    } else {
      this._open.delete(folder);
    }
    this.emit();
    if (open && !this._listings.has(folder)) {
      await this._load(folder);
    }
  }

  /** Check or uncheck an entry. */
  toggle(path: string, checked: boolean): void {
    this._selection = checked
      ? selectPath(this._selection, path)
      : deselectPath(
          this._selection,
          path,
          folder => this._listings.get(folder),
          this._isExcluded
        );
    this.emit();
  }

  /** Change the limit (the Submit dialog, when another assignment is chosen). */
  setLimit(maxBytes: number | null, what: string): void {
    this._maxBytes = maxBytes;
    this._limitWhat = what;
    this.emit();
  }

  setDraft(text: string): void {
    this._draft = text;
    this.emit();
  }

  /** Add the typed pattern, or say why it cannot be added. */
  addPattern(): void {
    const result = addPattern(this._patterns, this._draft, this.trans);
    if (typeof result === 'string') {
      this._patternError = result;
    } else {
      this._patternError = '';
      this._patterns = result;
      this._draft = '';
    }
    this.emit();
  }

  removePattern(pattern: string): void {
    this._patterns = this._patterns.filter(p => p !== pattern);
    this.emit();
    this.requestFocus();
  }

  /* ------------------------------------------------------------ private */

  /** List a folder once. */
  private async _load(folder: string): Promise<void> {
    if (this._listings.has(folder)) {
      return;
    }
    let listing: IFileListing;
    try {
      listing = await this._fetch(folder);
    } catch (error) {
      this._status = this.trans.__(
        'Could not list %1: %2',
        folder || this.trans.__('your home'),
        errorMessage(error, this.trans)
      );
      this.emit();
      return;
    }
    if (this.isDisposed) {
      return;
    }
    if (folder === '' && !this._patternsLoaded) {
      this._patternsLoaded = true;
      this._defaults = [...(listing.excluded_patterns ?? [])];
      this._patterns = [...this._defaults];
    }
    const entries = sortEntries(listing.entries);
    this._listings.set(folder, entries);
    for (const entry of entries) {
      this._entries.set(normalizePath(entry.path), entry);
    }
    this._status = '';
    this.emit();
  }

  private _reasonOf(entry: IFileEntry): string | null {
    return exclusionReason(
      entry,
      this.options.editablePatterns ? this._patterns : null,
      this._defaults,
      this.trans
    );
  }

  private _isExcluded = (entry: IFileEntry): boolean =>
    this._reasonOf(entry) !== null;

  private _fetch: (path: string) => Promise<IFileListing>;
  private _maxBytes: number | null;
  private _limitWhat: string;
  private _selection: string[];
  private _patterns: string[] = [];
  private _defaults: string[] = [];
  private _patternsLoaded = false;
  private _draft = '';
  private _patternError = '';
  private _status = '';
  private _open = new Set<string>();
  private _listings = new Map<string, IFileEntry[]>();
  private _entries = new Map<string, IFileEntry>();
  private _index: IPickerIndex = {
    entry: path => this._entries.get(normalizePath(path)),
    children: folder => this._listings.get(folder)
  };
}
