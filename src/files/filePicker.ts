/**
 * The file picker of the Save-as-template and Submit dialogs: the home as a
 * tree that loads folders when they are opened, with checkboxes, sizes and
 * file counts, excluded entries greyed out with the reason, the total of the
 * selection against a size limit, and (for templates) an editable list of
 * excluded patterns. The selection logic lives in `selection.ts`.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';
import { CguAPI, errorMessage } from '../api';
import { replaceChildren } from '../dom';
import { formatBytes } from '../format';
import {
  addPattern,
  ancestorsOf,
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
import {
  IRow,
  patternFieldset,
  pickerFrame,
  placeholderItem,
  renderPatternList,
  renderPickerRow
} from './parts';
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

export class FilePicker extends Widget {
  constructor(options: IFilePickerOptions) {
    super();
    this._options = options;
    this._trans = options.trans;
    this._fetch = options.fetch ?? CguAPI.files;
    this._maxBytes = options.maxBytes;
    this._selection = normalizeSelection(options.initial ?? []);
    this.addClass('cgu-Picker');
    this.node.dataset.cgu = 'file-picker';
    this._build();
    this.ready = this._start();
  }

  /** Resolves once the home and the folders of the initial paths are loaded. */
  readonly ready: Promise<void>;

  /** Emitted when the selection, the patterns or the limit change. */
  get changed(): ISignal<this, void> {
    return this._changed;
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

  /** Whether the selection is over the limit. */
  get overLimit(): boolean {
    return isOverLimit(this.totals.bytes, this._maxBytes);
  }

  /** Change the limit (the Submit dialog, when another assignment is chosen). */
  setLimit(maxBytes: number | null, what: string): void {
    this._maxBytes = maxBytes;
    this._options = { ...this._options, limitWhat: what };
    this._sync();
  }

  /**
   * Handle Enter inside the picker before the dialog does: in the pattern box
   * it adds the pattern, on a checkbox it toggles it (instead of accepting
   * the whole dialog).
   */
  handleDialogKeydown(event: KeyboardEvent): boolean {
    if (event.key !== 'Enter') {
      return false;
    }
    const target = event.target;
    if (this._patternInput && target === this._patternInput) {
      event.preventDefault();
      event.stopPropagation();
      this._addPattern();
      return true;
    }
    if (
      target instanceof HTMLInputElement &&
      target.type === 'checkbox' &&
      this.node.contains(target)
    ) {
      event.preventDefault();
      event.stopPropagation();
      if (!target.disabled) {
        target.click();
      }
      return true;
    }
    return false;
  }

  /* ------------------------------------------------------------ loading */

  private async _start(): Promise<void> {
    await this._load('');
    // Open the folders that lead to the initial paths, so they show (and
    // their sizes are known).
    const folders = new Set<string>();
    for (const path of this._selection) {
      ancestorsOf(path).forEach(folder => folders.add(folder));
    }
    for (const folder of Array.from(folders).sort()) {
      if (!this._rows.has(folder)) {
        continue; // not in the home (any more)
      }
      await this._expand(folder, true);
    }
    this._sync();
  }

  /** Load a folder's listing once. */
  private async _load(folder: string): Promise<IFileEntry[] | null> {
    const known = this._listings.get(folder);
    if (known) {
      return known;
    }
    let listing: IFileListing;
    try {
      listing = await this._fetch(folder);
    } catch (error) {
      this._setStatus(
        this._trans.__(
          'Could not list %1: %2',
          folder || this._trans.__('your home'),
          errorMessage(error, this._trans)
        )
      );
      return null;
    }
    if (this.isDisposed) {
      return null;
    }
    if (folder === '' && !this._patternsLoaded) {
      this._patternsLoaded = true;
      this._defaults = [...(listing.excluded_patterns ?? [])];
      this._patterns = [...this._defaults];
      this._renderPatterns();
    }
    const entries = sortEntries(listing.entries);
    this._listings.set(folder, entries);
    for (const entry of entries) {
      this._entries.set(normalizePath(entry.path), entry);
    }
    const list =
      folder === '' ? this._tree : (this._rows.get(folder)?.children ?? null);
    if (list) {
      replaceChildren(
        list,
        ...(entries.length
          ? entries.map(entry => this._renderRow(entry))
          : [placeholderItem(this._trans.__('empty folder'))])
      );
    }
    this._setStatus('');
    return entries;
  }

  private async _expand(folder: string, open: boolean): Promise<void> {
    const row = this._rows.get(folder);
    if (!row || !row.toggle || !row.children) {
      return;
    }
    row.toggle.setAttribute('aria-expanded', open ? 'true' : 'false');
    row.item.classList.toggle('cgu-mod-open', open);
    row.children.hidden = !open;
    if (open && !this._listings.has(folder)) {
      replaceChildren(
        row.children,
        placeholderItem(this._trans.__('Loading…'))
      );
      await this._load(folder);
      this._sync();
    }
  }

  /* ------------------------------------------------------------ building */

  private _build(): void {
    const frame = pickerFrame(this._options.label);
    this._tree = frame.tree;
    this._summary = frame.summary;
    this._warning = frame.warning;
    this._status = frame.status;
    const parts = frame.parts;
    if (this._options.editablePatterns) {
      const patterns = patternFieldset(() => this._addPattern(), this._trans);
      this._patternList = patterns.list;
      this._patternInput = patterns.input;
      this._patternError = patterns.error;
      parts.push(patterns.part);
    }
    replaceChildren(this.node, ...parts);
    replaceChildren(
      this._tree,
      placeholderItem(this._trans.__('Loading your files…'))
    );
    this._renderPatterns();
    this._sync();
  }

  private _renderRow(entry: IFileEntry): HTMLLIElement {
    const { path, row } = renderPickerRow(
      entry,
      {
        toggle: (path, checked) => this._toggle(path, checked),
        expand: (path, open) => void this._expand(path, open)
      },
      this._trans
    );
    this._rows.set(path, row);
    return row.item;
  }

  private _renderPatterns(): void {
    if (!this._patternList) {
      return;
    }
    renderPatternList(
      this._patternList,
      this._patterns,
      pattern => {
        this._patterns = this._patterns.filter(p => p !== pattern);
        this._renderPatterns();
        this._sync();
        this._patternInput?.focus();
      },
      this._trans
    );
  }

  /* ---------------------------------------------------------- behaviour */

  private _addPattern(): void {
    if (!this._patternInput || !this._patternError) {
      return;
    }
    const result = addPattern(
      this._patterns,
      this._patternInput.value,
      this._trans
    );
    if (typeof result === 'string') {
      this._patternError.textContent = result;
      return;
    }
    this._patternError.textContent = '';
    this._patterns = result;
    this._patternInput.value = '';
    this._renderPatterns();
    this._sync();
  }

  private _toggle(path: string, checked: boolean): void {
    this._selection = checked
      ? selectPath(this._selection, path)
      : deselectPath(
          this._selection,
          path,
          folder => this._listings.get(folder),
          this._isExcluded
        );
    this._sync();
  }

  /** Bring every checkbox, reason and the summary in line with the state. */
  private _sync(): void {
    for (const [path, row] of this._rows) {
      const reason = this._reasonOf(row.entry);
      const excludedAbove = ancestorsOf(path).some(folder => {
        const entry = this._entries.get(folder);
        return !!entry && this._isExcluded(entry);
      });
      const excluded = reason !== null || excludedAbove;
      const state = checkState(path, this._selection);
      row.checkbox.checked = !excluded && state === 'checked';
      row.checkbox.indeterminate = !excluded && state === 'partial';
      row.checkbox.disabled = excluded;
      row.item.classList.toggle('cgu-mod-excluded', excluded);
      row.item.dataset.excluded = excluded ? 'true' : 'false';
      row.item.dataset.state = excluded ? 'excluded' : state;
      row.reason.textContent = reason ?? '';
      if (row.toggle) {
        row.toggle.disabled = excluded;
      }
      if (row.entry.type === 'directory') {
        // An excluded folder contributes nothing; a loaded one is added up
        // with the current patterns.
        const inside = excluded
          ? null
          : selectionTotals([path], this._index, this._isExcluded);
        row.size.textContent = inside ? formatBytes(inside.bytes) : '';
        row.count.textContent = inside
          ? filesText(inside.files, this._trans)
          : '';
      }
    }
    const totals = this.totals;
    this._summary.textContent = totalsText(totals, this._maxBytes, this._trans);
    const warning = overLimitText(
      totals.bytes,
      this._maxBytes,
      this._options.limitWhat,
      this._trans
    );
    this._warning.textContent = warning ?? '';
    this._warning.hidden = warning === null;
    this.node.classList.toggle('cgu-mod-over', warning !== null);
    this._changed.emit();
  }

  private _reasonOf(entry: IFileEntry): string | null {
    return exclusionReason(
      entry,
      this._options.editablePatterns ? this._patterns : null,
      this._defaults,
      this._trans
    );
  }

  private _isExcluded = (entry: IFileEntry): boolean =>
    this._reasonOf(entry) !== null;

  private _setStatus(text: string): void {
    this._status.textContent = text;
  }

  private _options: IFilePickerOptions;
  private _trans: TranslationBundle;
  private _fetch: (path: string) => Promise<IFileListing>;
  private _maxBytes: number | null;
  private _selection: string[];
  private _patterns: string[] = [];
  private _defaults: string[] = [];
  private _patternsLoaded = false;
  private _listings = new Map<string, IFileEntry[]>();
  private _entries = new Map<string, IFileEntry>();
  private _rows = new Map<string, IRow>();
  private _index: IPickerIndex = {
    entry: path => this._entries.get(normalizePath(path)),
    children: folder => this._listings.get(folder)
  };
  private _changed = new Signal<this, void>(this);
  private _tree!: HTMLUListElement;
  private _summary!: HTMLElement;
  private _warning!: HTMLElement;
  private _status!: HTMLElement;
  private _patternList: HTMLUListElement | null = null;
  private _patternInput: HTMLInputElement | null = null;
  private _patternError: HTMLElement | null = null;
}
