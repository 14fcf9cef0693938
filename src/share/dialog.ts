/**
 * The Share dialog: grant people or groups read-only or editable access to
 * this notebook server or to one file in it, optionally for a limited time;
 * list the current shares with their links, and revoke them.
 */
import { Dialog } from '@jupyterlab/apputils';
import { PathExt } from '@jupyterlab/coreutils';
import { Widget } from '@lumino/widgets';
import { CguAPI, errorMessage } from '../api';
import { CguDialog, IKeyAwareBody } from '../dialog';
import { copyText, h, replaceChildren } from '../dom';
import { absoluteShareUrl, countdownText } from '../format';
import {
  accessLabel,
  expiryMinutes,
  IGranteeSuggestion,
  sharePath
} from './format';
import {
  accessFieldset,
  chipItem,
  expiryRow,
  linkPart,
  scopeChoice,
  whoPart
} from './parts';
import { GranteeSearch } from './search';
import {
  renderShareList,
  shareListRegion,
  updateShareCountdowns
} from './shareList';
import { IShareAPI, IShareDialogOptions } from './types';
export type { IShareAPI, IShareDialogOptions, ShareMode } from './types';
import { IShare, IShareRequest } from '../apiTypes';
import { ShareAccess } from '../tokens';

/** How often the expiry countdowns are refreshed. */
const COUNTDOWN_MS = 30 * 1000;

/** Open the Share dialog; resolves when it is closed. */
export async function openShareDialog(
  options: IShareDialogOptions
): Promise<void> {
  const body = new ShareBody(options);
  const name =
    options.mode === 'notebook' || !options.filePath
      ? options.notebookName || 'this notebook'
      : PathExt.basename(options.filePath);
  const dialog = new CguDialog<void>({
    title: `Share ${name}`,
    body,
    buttons: [Dialog.cancelButton({ label: 'Close' })],
    focusNodeSelector: '[data-cgu="share-search"]',
    hasClose: true
  });
  dialog.addClass('cgu-ShareDialog');
  try {
    await dialog.launch();
  } finally {
    dialog.dispose();
  }
}

/** The body of the Share dialog. */
export class ShareBody extends Widget implements IKeyAwareBody {
  constructor(options: IShareDialogOptions) {
    super();
    this._options = options;
    this._api = options.api ?? CguAPI;
    this._access = options.defaultAccess;
    this.addClass('cgu-Share');
    this.node.dataset.cgu = 'share-dialog';
    this._build();
  }

  /** Enter, arrows and Escape for the suggestion list; Enter shares. */
  handleDialogKeydown(event: KeyboardEvent): boolean {
    const target = event.target as HTMLElement | null;
    if (!target || !this.node.contains(target)) {
      return false;
    }
    const inSearch = target === this._search;
    const open = this._grantees.isOpen;
    switch (event.key) {
      case 'ArrowDown':
      case 'ArrowUp':
        if (!inSearch || !open) {
          return false;
        }
        event.preventDefault();
        event.stopPropagation();
        this._grantees.moveActive(event.key === 'ArrowDown' ? 1 : -1);
        return true;
      case 'Escape':
        if (!inSearch || !open) {
          return false;
        }
        event.preventDefault();
        event.stopPropagation();
        this._grantees.closeList();
        return true;
      case 'Enter':
        if (target instanceof HTMLButtonElement) {
          // The button's own click handles it.
          return false;
        }
        if (
          !(target instanceof HTMLInputElement) &&
          !(target instanceof HTMLSelectElement)
        ) {
          return false;
        }
        event.preventDefault();
        event.stopPropagation();
        const grantees = this._grantees;
        if (inSearch && open && grantees.active >= 0) {
          this._pick(grantees.suggestions[grantees.active]);
        } else if (inSearch && open && grantees.suggestions.length === 1) {
          this._pick(grantees.suggestions[0]);
        } else if (this._picked.length > 0) {
          void this.share();
        } else {
          this._setStatus(
            'Choose a person or a group first: type 2 letters of a name.',
            'error'
          );
        }
        return true;
      default:
        return false;
    }
  }

  /** The grantees chosen so far. */
  get picked(): ReadonlyArray<IGranteeSuggestion> {
    return this._picked;
  }

  /** Share with every chosen grantee. */
  async share(): Promise<void> {
    if (this._busy || this._picked.length === 0) {
      return;
    }
    let minutes: number | null;
    try {
      minutes = expiryMinutes(this._expiry.value);
    } catch (error) {
      this._setStatus(errorMessage(error), 'error');
      return;
    }
    const path = sharePath(this._scope(), this._options.filePath);
    this._busy = true;
    this._updateSubmit();
    this._setStatus('Sharing…', 'info');
    const done: IShare[] = [];
    const failed: IGranteeSuggestion[] = [];
    const errors: string[] = [];
    for (const grantee of this._picked) {
      const body: IShareRequest = {
        grantee: grantee.name,
        kind: grantee.kind,
        access: this._access,
        expires_in_minutes: minutes
      };
      if (path) {
        body.path = path;
      }
      try {
        done.push(await this._api.createShare(body));
      } catch (error) {
        failed.push(grantee);
        errors.push(`${grantee.display_name}: ${errorMessage(error)}`);
      }
    }
    this._busy = false;
    this._picked = failed;
    this._renderChips();
    this._updateSubmit();
    if (done.length > 0) {
      const last = done[done.length - 1];
      this._showLink(last);
      const who = done.map(s => s.grantee.display_name).join(', ');
      const summary =
        `Shared ${path ? path : 'the whole notebook'} ` +
        `with ${who} (${accessLabel(this._access)}, ` +
        `${countdownText(last.expires_at, Date.now())}). Send them the link.`;
      this._setStatus(
        errors.length ? `${summary} ${errors.join(' ')}` : summary,
        errors.length ? 'error' : 'info'
      );
    } else {
      this._setStatus(errors.join(' '), 'error');
    }
    await this.refresh();
  }

  /** Load the list of current shares. */
  async refresh(): Promise<void> {
    try {
      this._shares = await this._api.shares();
      this._listError = null;
    } catch (error) {
      this._listError = errorMessage(error);
    }
    this._renderList();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._grantees.dispose();
    window.clearInterval(this._countdownTimer);
    super.dispose();
  }

  protected onAfterAttach(): void {
    void this.refresh();
    this._countdownTimer = window.setInterval(
      () => this._updateCountdowns(),
      COUNTDOWN_MS
    );
  }

  protected onBeforeDetach(): void {
    window.clearInterval(this._countdownTimer);
  }

  /* ------------------------------------------------------------ building */

  private _build(): void {
    const options = this._options;
    const parts: HTMLElement[] = [];

    const scope = scopeChoice(options);
    this._scopeFile = scope.scopeFile;
    parts.push(scope.part);

    const who = whoPart(() => this._grantees.input());
    this._search = who.search;
    this._chips = who.chips;
    this._grantees = new GranteeSearch(who.search, who.listbox, who.hint, {
      api: this._api,
      selfName: options.selfName,
      picked: () => this._picked,
      onPick: suggestion => this._pick(suggestion),
      onError: message => this._setStatus(message, 'error'),
      isDisposed: () => this.isDisposed
    });
    parts.push(who.part);

    // Access: read-only or editable.
    parts.push(
      accessFieldset(this._access, value => {
        this._access = value;
      })
    );

    // Expiry.
    const row = expiryRow(this._options.defaultExpiry, () => void this.share());
    this._expiry = row.expiry;
    this._submit = row.submit;
    parts.push(row.part);

    this._status = h('div', {
      class: 'cgu-Share-status',
      role: 'status',
      'aria-live': 'polite',
      'data-cgu': 'share-status'
    });
    parts.push(this._status);

    // The link of the share just made.
    const linkBox = linkPart(text => void this._copy(text));
    this._link = linkBox.link;
    this._linkBox = linkBox.linkBox;
    parts.push(this._linkBox);

    // Current shares.
    const region = shareListRegion();
    this._list = region.list;
    parts.push(region.heading, this._list);
    replaceChildren(this.node, ...parts);
    this._renderChips();
    this._renderList();
  }

  private _scope(): 'notebook' | 'file' {
    if (this._options.mode === 'file') {
      return 'file';
    }
    if (this._options.mode === 'choose' && this._scopeFile?.checked) {
      return 'file';
    }
    return 'notebook';
  }

  /* ---------------------------------------------------------- the search */

  private _pick(suggestion: IGranteeSuggestion): void {
    if (
      !this._picked.some(
        p => p.kind === suggestion.kind && p.name === suggestion.name
      )
    ) {
      this._picked = [...this._picked, suggestion];
    }
    this._search.value = '';
    this._grantees.forget();
    this._grantees.setSuggestions([]);
    this._renderChips();
    this._updateSubmit();
    this._search.focus();
  }

  private _renderChips(): void {
    replaceChildren(
      this._chips,
      ...this._picked.map(p =>
        chipItem(p, () => {
          this._picked = this._picked.filter(q => q !== p);
          this._renderChips();
          this._updateSubmit();
          this._search.focus();
        })
      )
    );
    this._chips.hidden = this._picked.length === 0;
  }

  private _updateSubmit(): void {
    this._submit.disabled = this._busy || this._picked.length === 0;
  }

  /* ------------------------------------------------------------- output */

  private _setStatus(text: string, kind: 'info' | 'error'): void {
    this._status.textContent = text;
    this._status.classList.toggle('cgu-mod-error', kind === 'error');
    this._status.setAttribute('role', kind === 'error' ? 'alert' : 'status');
  }

  private _showLink(share: IShare): void {
    this._link.value = absoluteShareUrl(share.url, this._options.origin);
    this._linkBox.hidden = false;
  }

  private async _copy(text: string): Promise<void> {
    const ok = await copyText(text);
    this._setStatus(
      ok
        ? 'Link copied.'
        : `Could not copy: select the link and copy it yourself: ${text}`,
      ok ? 'info' : 'error'
    );
  }

  private _renderList(): void {
    renderShareList(
      this._list,
      this._shares,
      this._listError,
      this._options.origin,
      {
        copy: text => this._copy(text),
        revoke: (share, who, button) => this._revoke(share, who, button)
      }
    );
  }

  private _updateCountdowns(): void {
    updateShareCountdowns(this._list);
  }

  private async _revoke(
    share: IShare,
    who: string,
    button: HTMLButtonElement
  ): Promise<void> {
    button.disabled = true;
    try {
      await this._api.deleteShare(share.id);
      this._setStatus(`Revoked the share with ${who}.`, 'info');
    } catch (error) {
      button.disabled = false;
      this._setStatus(errorMessage(error), 'error');
      return;
    }
    this._search.focus();
    await this.refresh();
  }

  private _options: IShareDialogOptions;
  private _api: IShareAPI;
  private _access: ShareAccess;
  private _picked: IGranteeSuggestion[] = [];
  private _countdownTimer = 0;
  private _busy = false;
  private _shares: IShare[] | null = null;
  private _listError: string | null = null;
  private _scopeFile: HTMLInputElement | null = null;
  private _search!: HTMLInputElement;
  private _chips!: HTMLUListElement;
  private _grantees!: GranteeSearch;
  private _expiry!: HTMLSelectElement;
  private _submit!: HTMLButtonElement;
  private _status!: HTMLElement;
  private _link!: HTMLInputElement;
  private _linkBox!: HTMLElement;
  private _list!: HTMLElement;
}
