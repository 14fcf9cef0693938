/**
 * The Share dialog's search for people and groups: what was typed, after a
 * pause, is looked up in the directory and offered as a suggestion list
 * (ARIA combobox pattern) to move through with the arrow keys.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { errorMessage } from '../api';
import { replaceChildren } from '../dom';
import { granteeSuggestions, IGranteeSuggestion, shouldSearch } from './format';
import { suggestionItem } from './parts';
import { IDirectory } from '../apiTypes';

/** How long to wait after the last key press before asking the directory. */
const SEARCH_DEBOUNCE_MS = 250;

/** What the search needs from the dialog. */
export interface IGranteeSearchOptions {
  api: { directory(query: string): Promise<IDirectory> };
  /** The user's own name, never suggested. */
  selfName: string | null;
  /** The grantees chosen so far, not suggested again. */
  picked: () => ReadonlyArray<IGranteeSuggestion>;
  onPick: (suggestion: IGranteeSuggestion) => void;
  onError: (message: string) => void;
  isDisposed: () => boolean;
  trans: TranslationBundle;
}

/** The search box, its suggestion list and its hint. */
export class GranteeSearch {
  constructor(
    private _search: HTMLInputElement,
    private _listbox: HTMLUListElement,
    private _hint: HTMLElement,
    private _options: IGranteeSearchOptions
  ) {}

  /** Whether the suggestion list is open. */
  get isOpen(): boolean {
    return this._suggestions.length > 0 && !this._listbox.hidden;
  }

  /** Forgets answers still on their way. */
  forget(): void {
    this._searchSeq += 1;
  }

  dispose(): void {
    window.clearTimeout(this._searchTimer);
  }

  /** Searches the directory for what was typed, after a pause. */
  input(): void {
    window.clearTimeout(this._searchTimer);
    const query = this._search.value;
    if (!shouldSearch(query)) {
      this._searchSeq += 1; // forget answers still on their way
      this.setSuggestions([]);
      return;
    }
    this._searchTimer = window.setTimeout(() => {
      void this._searchNow(query);
    }, SEARCH_DEBOUNCE_MS);
  }

  private async _searchNow(query: string): Promise<void> {
    const seq = ++this._searchSeq;
    let directory: IDirectory;
    try {
      directory = await this._options.api.directory(query.trim());
    } catch (error) {
      if (seq === this._searchSeq) {
        this.setSuggestions([]);
        this._options.onError(errorMessage(error, this._options.trans));
      }
      return;
    }
    if (seq !== this._searchSeq || this._options.isDisposed()) {
      return; // a newer search is under way
    }
    const suggestions = granteeSuggestions(
      directory,
      query,
      this._options.picked(),
      this._options.selfName,
      this._options.trans
    );
    this.setSuggestions(suggestions);
    if (suggestions.length === 0) {
      this._hint.textContent = this._options.trans.__(
        'Nobody matches "%1".',
        query.trim()
      );
    }
  }

  /** Shows these suggestions, the first one active. */
  setSuggestions(suggestions: IGranteeSuggestion[]): void {
    const trans = this._options.trans;
    this._suggestions = suggestions;
    this._active = suggestions.length > 0 ? 0 : -1;
    const listId = this._listbox.id;
    replaceChildren(
      this._listbox,
      ...suggestions.map((s, index) =>
        suggestionItem(
          s,
          `${listId}-${index}`,
          index === this._active,
          () => this._options.onPick(s),
          trans
        )
      )
    );
    const open = suggestions.length > 0;
    this._listbox.hidden = !open;
    this._search.setAttribute('aria-expanded', open ? 'true' : 'false');
    this._updateActive();
    this._hint.textContent = open
      ? trans._n(
          '%1 suggestion: arrow keys to move, Enter to pick.',
          '%1 suggestions: arrow keys to move, Enter to pick.',
          suggestions.length
        )
      : trans.__(
          'Type at least 2 letters, then pick from the list (arrow keys and Enter).'
        );
  }

  /**
   * The combobox's keys in the search box while the list is open: the arrows
   * move the active suggestion, Escape closes the list, Enter picks the
   * active suggestion (or the only one). Returns true when it took the key.
   */
  handleKeydown(event: KeyboardEvent): boolean {
    if (event.target !== this._search || !this.isOpen) {
      return false;
    }
    switch (event.key) {
      case 'ArrowDown':
      case 'ArrowUp':
        this._moveActive(event.key === 'ArrowDown' ? 1 : -1);
        break;
      case 'Escape':
        this._closeList();
        break;
      case 'Enter': {
        const only = this._suggestions.length === 1 ? 0 : -1;
        const pick = this._suggestions[this._active >= 0 ? this._active : only];
        if (!pick) {
          return false;
        }
        this._options.onPick(pick);
        break;
      }
      default:
        return false;
    }
    event.preventDefault();
    event.stopPropagation();
    return true;
  }

  /** Hides the suggestion list. */
  private _closeList(): void {
    this._listbox.hidden = true;
    this._search.setAttribute('aria-expanded', 'false');
  }

  /** Moves the active suggestion by `step`, round the list. */
  private _moveActive(step: number): void {
    const n = this._suggestions.length;
    if (n === 0) {
      return;
    }
    this._active = (this._active + step + n) % n;
    this._updateActive();
  }

  private _updateActive(): void {
    const options = Array.from(this._listbox.children);
    options.forEach((option, index) =>
      option.setAttribute(
        'aria-selected',
        index === this._active ? 'true' : 'false'
      )
    );
    const active = options[this._active] as HTMLElement | undefined;
    if (active) {
      this._search.setAttribute('aria-activedescendant', active.id);
      active.scrollIntoView?.({ block: 'nearest' });
    } else {
      this._search.removeAttribute('aria-activedescendant');
    }
  }

  private _suggestions: IGranteeSuggestion[] = [];
  private _active = -1;
  private _searchSeq = 0;
  private _searchTimer = 0;
}
