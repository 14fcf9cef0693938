/**
 * The Share dialog's state and what its controls do, without any DOM: the
 * grantee search (debounced, newest answer wins), the chosen grantees, the
 * access, expiry and scope, the share list with its countdowns, and the
 * status line. The components (form.tsx, who.tsx, shareList.tsx) render it;
 * the dialog hands it the keys it takes before the dialog's own (`key`).
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { errorMessage } from '../api';
import { absoluteShareUrl } from '../format';
import { FormModel } from '../useModel';
import { comboboxKey, suggestionsHint } from './combobox';
import {
  expiryMinutes,
  granteeSuggestions,
  IGranteeSuggestion,
  IShareStatus,
  shareOutcome,
  sharePath,
  shouldSearch
} from './format';
import { IShareAPI, IShareDialogOptions } from './types';
import { IDirectory, IShare, IShareRequest, ShareAccess } from '../apiTypes';

/** How long to wait after the last key press before asking the directory. */
export const SEARCH_DEBOUNCE_MS = 250;

export type { IShareStatus } from './format';

/** Where a key was pressed inside the dialog's body. */
export type KeyTarget =
  /** The grantee search box. */
  | 'search'
  /** Another input or a select: Enter shares. */
  | 'field'
  /** Anything else (a button handles Enter itself). */
  | 'other';

/** What the model needs besides the dialog's options. */
export interface IShareModelOptions extends IShareDialogOptions {
  api: IShareAPI;
  /** Copy a text; resolves whether it was copied. */
  copy: (text: string) => Promise<boolean>;
}

export class ShareModel extends FormModel {
  constructor(options: IShareModelOptions) {
    super();
    this.options = options;
    this.trans = options.trans;
    this._access = options.defaultAccess;
    this._expiry = options.defaultExpiry;
    this._scope =
      options.mode === 'file' || (options.mode === 'choose' && options.filePath)
        ? 'file'
        : 'notebook';
    this._hint = suggestionsHint(0, this.trans);
  }

  readonly options: IShareModelOptions;
  readonly trans: TranslationBundle;

  /* ------------------------------------------------------------- state */

  get scope(): 'notebook' | 'file' {
    return this._scope;
  }
  get access(): ShareAccess {
    return this._access;
  }
  get expiry(): string {
    return this._expiry;
  }
  get query(): string {
    return this._query;
  }
  get suggestions(): ReadonlyArray<IGranteeSuggestion> {
    return this._suggestions;
  }
  /** The index of the active suggestion; -1 for none. */
  get active(): number {
    return this._active;
  }
  /** Whether the suggestion list shows. */
  get isOpen(): boolean {
    return this._suggestions.length > 0 && this._open;
  }
  get hint(): string {
    return this._hint;
  }
  /** The grantees chosen so far. */
  get picked(): ReadonlyArray<IGranteeSuggestion> {
    return this._picked;
  }
  get busy(): boolean {
    return this._busy;
  }
  get canShare(): boolean {
    return !this._busy && this._picked.length > 0;
  }
  get status(): IShareStatus | null {
    return this._status;
  }
  /** The link of the share just made; null before. */
  get link(): string | null {
    return this._link;
  }
  /** The current shares; null while loading. */
  get shares(): ReadonlyArray<IShare> | null {
    return this._shares;
  }
  get listError(): string | null {
    return this._listError;
  }
  /** The time the countdowns are computed for. */
  get now(): number {
    return this._now;
  }
  /** Whether the Revoke button of this share waits for the server. */
  isRevoking(share: IShare): boolean {
    return this._revoking.has(share.id);
  }

  /* ------------------------------------------------------------ changes */

  setScope(scope: 'notebook' | 'file'): void {
    this._scope = scope;
    this.emit();
  }

  setAccess(access: ShareAccess): void {
    this._access = access;
    this.emit();
  }

  setExpiry(id: string): void {
    this._expiry = id;
    this.emit();
  }

  /** Repaint the countdowns. */
  tick(now = Date.now()): void {
    this._now = now;
    this.emit();
  }

  /** What was typed in the search box: searched for after a pause. */
  setQuery(query: string): void {
    this._query = query;
    clearTimeout(this._searchTimer);
    if (!shouldSearch(query)) {
      this._searchSeq += 1; // forget answers still on their way
      this._setSuggestions([]);
      return;
    }
    this.emit();
    this._searchTimer = setTimeout(() => {
      void this.search(query);
    }, SEARCH_DEBOUNCE_MS);
  }

  /** Ask the directory now (`setQuery` does it after a pause). */
  async search(query: string): Promise<void> {
    const seq = ++this._searchSeq;
    let directory: IDirectory;
    try {
      directory = await this.options.api.directory(query.trim());
    } catch (error) {
      if (seq === this._searchSeq && !this.isDisposed) {
        this._setSuggestions([]);
        this._setStatus(errorMessage(error, this.trans), 'error');
      }
      return;
    }
    if (seq !== this._searchSeq || this.isDisposed) {
      return; // a newer search is under way
    }
    const suggestions = granteeSuggestions(
      directory,
      query,
      this._picked,
      this.options.selfName,
      this.trans
    );
    this._setSuggestions(suggestions);
    if (suggestions.length === 0) {
      this._hint = this.trans.__('Nobody matches "%1".', query.trim());
      this.emit();
    }
  }

  /** Choose a suggestion: it becomes a chip, the search box empties. */
  pick(suggestion: IGranteeSuggestion): void {
    if (
      !this._picked.some(
        p => p.kind === suggestion.kind && p.name === suggestion.name
      )
    ) {
      this._picked = [...this._picked, suggestion];
    }
    this._query = '';
    this._searchSeq += 1;
    this._setSuggestions([]);
    this.requestFocus();
  }

  /** Remove a chosen grantee. */
  unpick(removed: IGranteeSuggestion): void {
    this._picked = this._picked.filter(p => p !== removed);
    this.emit();
    this.requestFocus();
  }

  /**
   * A key pressed in the body, before the dialog sees it: the list's keys in
   * the search box, and Enter in a field shares. Returns true when it took
   * the key (the caller then keeps it from the dialog).
   */
  key(key: string, target: KeyTarget): boolean {
    if (target === 'search' && this.isOpen) {
      const action = comboboxKey(key, this._suggestions.length, this._active);
      if (action?.kind === 'move') {
        this._active = action.active;
        this.emit();
        return true;
      }
      if (action?.kind === 'close') {
        this._open = false;
        this.emit();
        return true;
      }
      if (action?.kind === 'pick') {
        this.pick(this._suggestions[action.index]);
        return true;
      }
    }
    if (key !== 'Enter' || target === 'other') {
      return false;
    }
    if (this._picked.length > 0) {
      void this.share();
    } else {
      this._setStatus(
        this.trans.__(
          'Choose a person or a group first: type 2 letters of a name.'
        ),
        'error'
      );
    }
    return true;
  }

  /** Share with every chosen grantee. */
  async share(): Promise<void> {
    if (!this.canShare) {
      return;
    }
    const trans = this.trans;
    let minutes: number | null;
    try {
      minutes = expiryMinutes(this._expiry, trans);
    } catch (error) {
      this._setStatus(errorMessage(error, trans), 'error');
      return;
    }
    const path = sharePath(this._scope, this.options.filePath);
    const access = this._access;
    this._busy = true;
    this._setStatus(trans.__('Sharing…'), 'info');
    const done: IShare[] = [];
    const failed: IGranteeSuggestion[] = [];
    const errors: string[] = [];
    for (const grantee of this._picked) {
      const body: IShareRequest = {
        grantee: grantee.name,
        kind: grantee.kind,
        access,
        expires_in_minutes: minutes,
        ...(path ? { path } : {})
      };
      try {
        done.push(await this.options.api.createShare(body));
      } catch (error) {
        failed.push(grantee);
        errors.push(
          trans.__('%1: %2', grantee.display_name, errorMessage(error, trans))
        );
      }
    }
    this._busy = false;
    this._picked = failed;
    if (done.length > 0) {
      this._link = absoluteShareUrl(
        done[done.length - 1].url,
        this.options.origin
      );
    }
    const outcome = shareOutcome(path, access, done, errors, Date.now(), trans);
    this._setStatus(outcome.text, outcome.kind);
    await this.refresh();
  }

  /** Load the list of current shares. */
  async refresh(): Promise<void> {
    try {
      this._shares = await this.options.api.shares();
      this._listError = null;
    } catch (error) {
      this._listError = errorMessage(error, this.trans);
    }
    this._now = Date.now();
    this.emit();
  }

  /** Revoke a share (`who`: the grantee as the list shows them). */
  async revoke(share: IShare, who: string): Promise<void> {
    this._revoking.add(share.id);
    this.emit();
    try {
      await this.options.api.deleteShare(share.id);
      this._setStatus(this.trans.__('Revoked the share with %1.', who), 'info');
    } catch (error) {
      this._setStatus(errorMessage(error, this.trans), 'error');
      return;
    } finally {
      this._revoking.delete(share.id);
      this.emit();
    }
    this.requestFocus();
    await this.refresh();
  }

  /** Copy a link and say whether it worked. */
  async copy(text: string): Promise<void> {
    const ok = await this.options.copy(text);
    this._setStatus(
      ok
        ? this.trans.__('Link copied.')
        : this.trans.__(
            'Could not copy: select the link and copy it yourself: %1',
            text
          ),
      ok ? 'info' : 'error'
    );
  }

  dispose(): void {
    clearTimeout(this._searchTimer);
    this._searchSeq += 1;
    super.dispose();
  }

  /* ------------------------------------------------------------ private */

  /** Show these suggestions, the first one active. */
  private _setSuggestions(suggestions: IGranteeSuggestion[]): void {
    this._suggestions = suggestions;
    this._active = suggestions.length > 0 ? 0 : -1;
    this._open = suggestions.length > 0;
    this._hint = suggestionsHint(suggestions.length, this.trans);
    this.emit();
  }

  private _setStatus(text: string, kind: 'info' | 'error'): void {
    this._status = { text, kind };
    this.emit();
  }

  private _scope: 'notebook' | 'file';
  private _access: ShareAccess;
  private _expiry: string;
  private _query = '';
  private _suggestions: IGranteeSuggestion[] = [];
  private _active = -1;
  private _open = false;
  private _hint: string;
  private _picked: IGranteeSuggestion[] = [];
  private _busy = false;
  private _status: IShareStatus | null = null;
  private _link: string | null = null;
  private _shares: IShare[] | null = null;
  private _listError: string | null = null;
  private _now = Date.now();
  private _revoking = new Set<number>();
  private _searchSeq = 0;
  private _searchTimer: ReturnType<typeof setTimeout> | undefined = undefined;
}
