/**
 * The Share dialog: grant people or groups read-only or editable access to
 * this notebook server or to one file in it, optionally for a limited time;
 * list the current shares with their links, and revoke them.
 *
 * A little over the house's ~400 lines: the grantee search and the share list
 * are already their own modules (search.ts, shareList.ts); what is left is the
 * form's state, which the planned React rewrite (issue 11) will split by itself.
 */
import { Dialog } from '@jupyterlab/apputils';
import { PathExt } from '@jupyterlab/coreutils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Poll } from '@lumino/polling';
import { Widget } from '@lumino/widgets';
import { CguAPI, errorMessage } from '../api';
import { CguDialog, IKeyAwareBody } from '../dialog';
import { copyText, replaceChildren } from '../dom';
import { absoluteShareUrl } from '../format';
import { repaintPoll } from '../polling';
import {
  expiryMinutes,
  IGranteeSuggestion,
  sharedText,
  sharePath
} from './format';
import {
  accessFieldset,
  expiryRow,
  linkPart,
  renderChips,
  scopeChoice,
  statusLine,
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

/** How often the expiry countdowns are refreshed, in seconds. */
const COUNTDOWN_SECONDS = 30;

/** Open the Share dialog; resolves when it is closed. */
export async function openShareDialog(
  options: IShareDialogOptions
): Promise<void> {
  const trans = options.trans;
  const body = new ShareBody(options);
  const name =
    options.mode === 'notebook' || !options.filePath
      ? options.notebookName || trans.__('this notebook')
      : PathExt.basename(options.filePath);
  const dialog = new CguDialog<void>({
    title: trans.__('Share %1', name),
    body,
    buttons: [Dialog.cancelButton({ label: trans.__('Close') })],
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
    this._trans = options.trans;
    this._api = options.api ?? CguAPI;
    this._access = options.defaultAccess;
    this._countdowns = repaintPoll(
      'cgu-lab:share-countdowns',
      COUNTDOWN_SECONDS,
      () => updateShareCountdowns(this._list, this._trans)
    );
    this.addClass('cgu-Share');
    this.node.dataset.cgu = 'share-dialog';
    this._build();
  }

  /**
   * The suggestion list's keys (see `GranteeSearch.handleKeydown`); Enter in
   * another field shares (a button's own click handles Enter on it).
   */
  handleDialogKeydown(event: KeyboardEvent): boolean {
    const target = event.target as HTMLElement | null;
    if (!target || !this.node.contains(target)) {
      return false;
    }
    if (this._grantees.handleKeydown(event)) {
      return true;
    }
    if (
      event.key !== 'Enter' ||
      !(
        target instanceof HTMLInputElement ||
        target instanceof HTMLSelectElement
      )
    ) {
      return false;
    }
    event.preventDefault();
    event.stopPropagation();
    if (this._picked.length > 0) {
      void this.share();
    } else {
      this._setStatus(
        this._trans.__(
          'Choose a person or a group first: type 2 letters of a name.'
        ),
        'error'
      );
    }
    return true;
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
    const trans = this._trans;
    let minutes: number | null;
    try {
      minutes = expiryMinutes(this._expiry.value, trans);
    } catch (error) {
      this._setStatus(errorMessage(error, trans), 'error');
      return;
    }
    const path = sharePath(this._scope(), this._options.filePath);
    this._busy = true;
    this._updateSubmit();
    this._setStatus(trans.__('Sharing…'), 'info');
    const done: IShare[] = [];
    const failed: IGranteeSuggestion[] = [];
    const errors: string[] = [];
    for (const grantee of this._picked) {
      const body: IShareRequest = {
        grantee: grantee.name,
        kind: grantee.kind,
        access: this._access,
        expires_in_minutes: minutes,
        ...(path ? { path } : {})
      };
      try {
        done.push(await this._api.createShare(body));
      } catch (error) {
        failed.push(grantee);
        errors.push(
          trans.__('%1: %2', grantee.display_name, errorMessage(error, trans))
        );
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
      const summary = sharedText(
        path,
        who,
        this._access,
        last.expires_at,
        Date.now(),
        trans
      );
      this._setStatus(
        errors.length ? trans.__('%1 %2', summary, errors.join(' ')) : summary,
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
      this._listError = errorMessage(error, this._trans);
    }
    this._renderList();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._grantees.dispose();
    this._countdowns.dispose();
    super.dispose();
  }

  protected onAfterAttach(): void {
    void this.refresh();
    void this._countdowns.start();
  }

  protected onBeforeDetach(): void {
    void this._countdowns.stop();
  }

  /* ------------------------------------------------------------ building */

  private _build(): void {
    const options = this._options;
    const trans = this._trans;
    const parts: HTMLElement[] = [];

    const scope = scopeChoice(options);
    this._scopeFile = scope.scopeFile;
    parts.push(scope.part);

    const who = whoPart(() => this._grantees.input(), trans);
    this._search = who.search;
    this._chips = who.chips;
    this._grantees = new GranteeSearch(who.search, who.listbox, who.hint, {
      api: this._api,
      selfName: options.selfName,
      picked: () => this._picked,
      onPick: suggestion => this._pick(suggestion),
      onError: message => this._setStatus(message, 'error'),
      isDisposed: () => this.isDisposed,
      trans
    });
    parts.push(who.part);

    // Access: read-only or editable.
    parts.push(
      accessFieldset(
        this._access,
        value => {
          this._access = value;
        },
        trans
      )
    );

    // Expiry.
    const row = expiryRow(
      this._options.defaultExpiry,
      () => void this.share(),
      trans
    );
    this._expiry = row.expiry;
    this._submit = row.submit;
    parts.push(row.part);

    this._status = statusLine();
    parts.push(this._status);

    // The link of the share just made.
    const linkBox = linkPart(text => void this._copy(text), trans);
    this._link = linkBox.link;
    this._linkBox = linkBox.linkBox;
    parts.push(this._linkBox);

    // Current shares.
    const region = shareListRegion(trans);
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
    renderChips(
      this._chips,
      this._picked,
      removed => {
        this._picked = this._picked.filter(p => p !== removed);
        this._renderChips();
        this._updateSubmit();
        this._search.focus();
      },
      this._trans
    );
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
        ? this._trans.__('Link copied.')
        : this._trans.__(
            'Could not copy: select the link and copy it yourself: %1',
            text
          ),
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
      },
      this._trans
    );
  }

  private async _revoke(
    share: IShare,
    who: string,
    button: HTMLButtonElement
  ): Promise<void> {
    button.disabled = true;
    try {
      await this._api.deleteShare(share.id);
      this._setStatus(
        this._trans.__('Revoked the share with %1.', who),
        'info'
      );
    } catch (error) {
      button.disabled = false;
      this._setStatus(errorMessage(error, this._trans), 'error');
      return;
    }
    this._search.focus();
    await this.refresh();
  }

  private _options: IShareDialogOptions;
  private _trans: TranslationBundle;
  private _api: IShareAPI;
  private _access: ShareAccess;
  private _picked: IGranteeSuggestion[] = [];
  private _countdowns: Poll;
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
