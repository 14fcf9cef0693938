/**
 * The Share dialog: grant people or groups read-only or editable access to
 * this notebook server or to one file in it, optionally for a limited time;
 * list the current shares with their links, and revoke them.
 */
import { Dialog } from '@jupyterlab/apputils';
import { PathExt } from '@jupyterlab/coreutils';
import { Widget } from '@lumino/widgets';
import { CguAPI, errorMessage } from './api';
import { CguDialog, IKeyAwareBody } from './dialog';
import { copyText, h, replaceChildren, uniqueId } from './dom';
import {
  absoluteShareUrl,
  accessLabel,
  countdownText,
  EXPIRY_CHOICES,
  expiryMinutes,
  granteeSuggestions,
  IGranteeSuggestion,
  scopeLabel,
  sharePath,
  shouldSearch
} from './format';
import { IDirectory, IShare, IShareRequest, ShareAccess } from './tokens';

/** How the dialog was opened. */
export type ShareMode =
  /** From a notebook: the user chooses the whole server or only the file. */
  | 'choose'
  /** From the file browser: only the file. */
  | 'file'
  /** From the palette with no document open: the whole notebook server. */
  | 'notebook';

/** What the Share dialog needs. */
export interface IShareDialogOptions {
  mode: ShareMode;
  /** The file's path (contents path, no drive), for 'choose' and 'file'. */
  filePath: string | null;
  /** The notebook server's name, for the title. */
  notebookName: string | null;
  /** The user's own name, left out of the suggestions. */
  selfName: string | null;
  defaultAccess: ShareAccess;
  /** An id of `EXPIRY_CHOICES`. */
  defaultExpiry: string;
  /** The page's origin, to make share links absolute. */
  origin: string;
  /** The endpoints; replaceable in tests. */
  api?: IShareAPI;
}

/** The endpoints the Share dialog calls. */
export interface IShareAPI {
  shares(): Promise<IShare[]>;
  createShare(body: IShareRequest): Promise<IShare>;
  deleteShare(id: number): Promise<{ message: string }>;
  directory(query: string): Promise<IDirectory>;
}

/** How long to wait after the last key press before asking the directory. */
const SEARCH_DEBOUNCE_MS = 250;
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
    const open = this._suggestions.length > 0 && !this._listbox.hidden;
    switch (event.key) {
      case 'ArrowDown':
      case 'ArrowUp':
        if (!inSearch || !open) {
          return false;
        }
        event.preventDefault();
        event.stopPropagation();
        this._moveActive(event.key === 'ArrowDown' ? 1 : -1);
        return true;
      case 'Escape':
        if (!inSearch || !open) {
          return false;
        }
        event.preventDefault();
        event.stopPropagation();
        this._closeList();
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
        if (inSearch && open && this._active >= 0) {
          this._pick(this._suggestions[this._active]);
        } else if (inSearch && open && this._suggestions.length === 1) {
          this._pick(this._suggestions[0]);
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
    window.clearTimeout(this._searchTimer);
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

    if (options.mode === 'choose' && options.filePath) {
      const wholeId = uniqueId('cgu-share-scope-all');
      const fileId = uniqueId('cgu-share-scope-file');
      const name = uniqueId('cgu-share-scope');
      this._scopeFile = h('input', {
        type: 'radio',
        id: fileId,
        name,
        value: 'file',
        checked: true,
        'data-cgu': 'share-scope-file'
      });
      const whole = h('input', {
        type: 'radio',
        id: wholeId,
        name,
        value: 'notebook',
        'data-cgu': 'share-scope-notebook'
      });
      parts.push(
        h(
          'fieldset',
          { class: 'cgu-Share-fieldset' },
          h('legend', {}, 'What to share'),
          h(
            'div',
            { class: 'cgu-Share-radio' },
            this._scopeFile,
            h('label', { for: fileId }, `Only ${options.filePath}`)
          ),
          h(
            'div',
            { class: 'cgu-Share-radio' },
            whole,
            h('label', { for: wholeId }, 'The whole notebook server')
          )
        )
      );
    } else {
      parts.push(
        h(
          'p',
          { class: 'cgu-Share-what', 'data-cgu': 'share-what' },
          options.mode === 'file' && options.filePath
            ? `Sharing only ${options.filePath}.`
            : 'Sharing the whole notebook server.'
        )
      );
    }

    // Who: a search box with a suggestion list (ARIA combobox pattern).
    const searchId = uniqueId('cgu-share-search');
    const listId = uniqueId('cgu-share-suggestions');
    const hintId = uniqueId('cgu-share-hint');
    this._search = h('input', {
      type: 'text',
      id: searchId,
      class: 'jp-mod-styled cgu-Share-search',
      role: 'combobox',
      autocomplete: 'off',
      spellcheck: 'false',
      'aria-autocomplete': 'list',
      'aria-expanded': 'false',
      'aria-controls': listId,
      'aria-describedby': hintId,
      placeholder: 'Name, user name or group',
      'data-cgu': 'share-search',
      oninput: () => this._onSearchInput()
    });
    this._listbox = h('ul', {
      id: listId,
      role: 'listbox',
      class: 'cgu-Share-suggestions',
      'aria-label': 'Suggestions',
      'data-cgu': 'share-suggestions',
      hidden: true
    });
    this._chips = h('ul', {
      class: 'cgu-Share-chips',
      'aria-label': 'Chosen people and groups',
      'data-cgu': 'share-grantees'
    });
    this._hint = h(
      'div',
      { id: hintId, class: 'cgu-Share-hint' },
      'Type at least 2 letters, then pick from the list (arrow keys and Enter).'
    );
    parts.push(
      h(
        'div',
        { class: 'cgu-Share-who' },
        h('label', { for: searchId }, 'Share with people or groups'),
        this._chips,
        h('div', { class: 'cgu-Combobox' }, this._search, this._listbox),
        this._hint
      )
    );

    // Access: read-only or editable.
    const accessName = uniqueId('cgu-share-access');
    const accessChoice = (
      value: ShareAccess,
      label: string,
      description: string
    ): HTMLElement => {
      const id = uniqueId(`cgu-share-access-${value}`);
      return h(
        'div',
        { class: 'cgu-Share-radio' },
        h('input', {
          type: 'radio',
          id,
          name: accessName,
          value,
          checked: this._access === value,
          'data-cgu': `share-access-${value}`,
          onchange: () => {
            this._access = value;
          }
        }),
        h('label', { for: id }, label),
        h('span', { class: 'cgu-Share-note' }, description)
      );
    };
    parts.push(
      h(
        'fieldset',
        { class: 'cgu-Share-fieldset' },
        h('legend', {}, 'Access'),
        accessChoice(
          'read',
          'Read-only',
          'open and read files; no saving, running cells or terminals'
        ),
        accessChoice(
          'edit',
          'Can edit',
          'change and save files, run code, open terminals'
        )
      )
    );

    // Expiry.
    const expiryId = uniqueId('cgu-share-expiry');
    this._expiry = h(
      'select',
      {
        id: expiryId,
        class: 'jp-mod-styled cgu-Share-expiry',
        'data-cgu': 'share-expiry'
      },
      ...EXPIRY_CHOICES.map(choice =>
        h(
          'option',
          {
            value: choice.id,
            selected: choice.id === this._options.defaultExpiry
          },
          choice.label
        )
      )
    );
    this._submit = h(
      'button',
      {
        type: 'button',
        class: 'jp-Button jp-mod-styled jp-mod-accept cgu-Share-submit',
        'data-cgu': 'share-submit',
        disabled: true,
        onclick: () => void this.share()
      },
      'Share'
    );
    parts.push(
      h(
        'div',
        { class: 'cgu-Share-row' },
        h('label', { for: expiryId }, 'Ends'),
        this._expiry,
        h('span', { class: 'cgu-Share-spacer' }),
        this._submit
      )
    );

    this._status = h('div', {
      class: 'cgu-Share-status',
      role: 'status',
      'aria-live': 'polite',
      'data-cgu': 'share-status'
    });
    parts.push(this._status);

    // The link of the share just made.
    const linkId = uniqueId('cgu-share-link');
    this._link = h('input', {
      type: 'text',
      id: linkId,
      class: 'jp-mod-styled cgu-Share-linkInput',
      readonly: true,
      'data-cgu': 'share-link',
      onfocus: (event: FocusEvent) =>
        (event.target as HTMLInputElement).select()
    });
    this._linkBox = h(
      'div',
      { class: 'cgu-Share-link', hidden: true },
      h('label', { for: linkId }, 'Link to send'),
      this._link,
      h(
        'button',
        {
          type: 'button',
          class: 'jp-Button jp-mod-styled cgu-Share-copy',
          'data-cgu': 'share-copy',
          onclick: () => void this._copy(this._link.value)
        },
        'Copy'
      )
    );
    parts.push(this._linkBox);

    // Current shares.
    const headingId = uniqueId('cgu-share-list-heading');
    this._list = h('div', {
      class: 'cgu-Share-list',
      'data-cgu': 'share-list',
      'aria-labelledby': headingId,
      role: 'region'
    });
    parts.push(
      h('h3', { id: headingId, class: 'cgu-Share-heading' }, 'Current shares'),
      this._list
    );
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

  private _onSearchInput(): void {
    window.clearTimeout(this._searchTimer);
    const query = this._search.value;
    if (!shouldSearch(query)) {
      this._searchSeq += 1; // forget answers still on their way
      this._setSuggestions([]);
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
      directory = await this._api.directory(query.trim());
    } catch (error) {
      if (seq === this._searchSeq) {
        this._setSuggestions([]);
        this._setStatus(errorMessage(error), 'error');
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
      this._options.selfName
    );
    this._setSuggestions(suggestions);
    if (suggestions.length === 0) {
      this._hint.textContent = `Nobody matches "${query.trim()}".`;
    }
  }

  private _setSuggestions(suggestions: IGranteeSuggestion[]): void {
    this._suggestions = suggestions;
    this._active = suggestions.length > 0 ? 0 : -1;
    const listId = this._listbox.id;
    replaceChildren(
      this._listbox,
      ...suggestions.map((s, index) =>
        h(
          'li',
          {
            id: `${listId}-${index}`,
            role: 'option',
            class: 'cgu-Share-suggestion',
            'aria-selected': index === this._active ? 'true' : 'false',
            'data-cgu': 'share-suggestion',
            'data-grantee': `${s.kind}:${s.name}`,
            // Keep the focus in the search box while clicking.
            onmousedown: (event: MouseEvent) => event.preventDefault(),
            onclick: () => this._pick(s)
          },
          h(
            'span',
            { class: `cgu-Badge cgu-Badge-${s.kind}` },
            s.kind === 'group' ? 'group' : 'user'
          ),
          ' ',
          s.label
        )
      )
    );
    const open = suggestions.length > 0;
    this._listbox.hidden = !open;
    this._search.setAttribute('aria-expanded', open ? 'true' : 'false');
    this._updateActive();
    this._hint.textContent = open
      ? `${suggestions.length} suggestion${suggestions.length === 1 ? '' : 's'}: arrow keys to move, Enter to pick.`
      : 'Type at least 2 letters, then pick from the list (arrow keys and Enter).';
  }

  private _closeList(): void {
    this._listbox.hidden = true;
    this._search.setAttribute('aria-expanded', 'false');
  }

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

  private _pick(suggestion: IGranteeSuggestion): void {
    if (
      !this._picked.some(
        p => p.kind === suggestion.kind && p.name === suggestion.name
      )
    ) {
      this._picked = [...this._picked, suggestion];
    }
    this._search.value = '';
    this._searchSeq += 1;
    this._setSuggestions([]);
    this._renderChips();
    this._updateSubmit();
    this._search.focus();
  }

  private _renderChips(): void {
    replaceChildren(
      this._chips,
      ...this._picked.map(p =>
        h(
          'li',
          {
            class: 'cgu-Chip',
            'data-cgu': 'grantee-chip',
            'data-grantee': `${p.kind}:${p.name}`
          },
          h(
            'span',
            { class: 'cgu-Chip-label', title: p.label },
            p.kind === 'group' ? `${p.display_name} (group)` : p.display_name
          ),
          h(
            'button',
            {
              type: 'button',
              class: 'cgu-Chip-remove',
              'aria-label': `Remove ${p.display_name}`,
              title: `Remove ${p.display_name}`,
              onclick: () => {
                this._picked = this._picked.filter(q => q !== p);
                this._renderChips();
                this._updateSubmit();
                this._search.focus();
              }
            },
            '×'
          )
        )
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
    if (this._listError) {
      replaceChildren(
        this._list,
        h('p', { class: 'cgu-Share-error', role: 'alert' }, this._listError)
      );
      return;
    }
    if (this._shares === null) {
      replaceChildren(
        this._list,
        h('p', { class: 'cgu-Share-empty' }, 'Loading…')
      );
      return;
    }
    if (this._shares.length === 0) {
      replaceChildren(
        this._list,
        h(
          'p',
          { class: 'cgu-Share-empty', 'data-cgu': 'share-list-empty' },
          'Not shared with anyone yet.'
        )
      );
      return;
    }
    const now = Date.now();
    const rows = this._shares.map(share => {
      const who =
        share.grantee.kind === 'group'
          ? `${share.grantee.display_name} (group)`
          : share.grantee.display_name || share.grantee.name;
      return h(
        'tr',
        {
          'data-cgu': 'share-row',
          'data-share-id': share.id,
          'data-grantee': `${share.grantee.kind}:${share.grantee.name}`
        },
        h('td', { title: share.grantee.name }, who),
        h(
          'td',
          {},
          h(
            'span',
            { class: `cgu-Badge cgu-Badge-${share.access}` },
            accessLabel(share.access)
          )
        ),
        h('td', { class: 'cgu-Share-path' }, scopeLabel(share.path)),
        h(
          'td',
          {
            class: 'cgu-Share-expiry',
            'data-expires-at': share.expires_at ?? '',
            title: share.expires_at
              ? new Date(share.expires_at).toLocaleString()
              : 'This share does not end.'
          },
          countdownText(share.expires_at, now)
        ),
        h(
          'td',
          { class: 'cgu-Share-actions' },
          h(
            'button',
            {
              type: 'button',
              class: 'jp-Button jp-mod-styled cgu-Share-copyLink',
              'data-cgu': 'share-copy-link',
              'aria-label': `Copy the link for ${who}`,
              title: absoluteShareUrl(share.url, this._options.origin),
              onclick: () =>
                void this._copy(
                  absoluteShareUrl(share.url, this._options.origin)
                )
            },
            'Copy link'
          ),
          h(
            'button',
            {
              type: 'button',
              class: 'jp-Button jp-mod-styled jp-mod-warn cgu-Share-revoke',
              'data-cgu': 'share-revoke',
              'aria-label': `Revoke the share with ${who}`,
              onclick: (event: MouseEvent) =>
                void this._revoke(
                  share,
                  who,
                  event.currentTarget as HTMLButtonElement
                )
            },
            'Revoke'
          )
        )
      );
    });
    replaceChildren(
      this._list,
      h(
        'table',
        { class: 'cgu-Table' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'col' }, 'Who'),
            h('th', { scope: 'col' }, 'Access'),
            h('th', { scope: 'col' }, 'What'),
            h('th', { scope: 'col' }, 'Ends'),
            h(
              'th',
              { scope: 'col' },
              h('span', { class: 'cgu-sr-only' }, 'Actions')
            )
          )
        ),
        h('tbody', {}, ...rows)
      )
    );
  }

  private _updateCountdowns(): void {
    const now = Date.now();
    this._list
      .querySelectorAll<HTMLElement>('td.cgu-Share-expiry')
      .forEach(cell => {
        cell.textContent = countdownText(cell.dataset.expiresAt || null, now);
      });
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
  private _suggestions: IGranteeSuggestion[] = [];
  private _active = -1;
  private _searchSeq = 0;
  private _searchTimer = 0;
  private _countdownTimer = 0;
  private _busy = false;
  private _shares: IShare[] | null = null;
  private _listError: string | null = null;
  private _scopeFile: HTMLInputElement | null = null;
  private _search!: HTMLInputElement;
  private _listbox!: HTMLUListElement;
  private _chips!: HTMLUListElement;
  private _hint!: HTMLElement;
  private _expiry!: HTMLSelectElement;
  private _submit!: HTMLButtonElement;
  private _status!: HTMLElement;
  private _link!: HTMLInputElement;
  private _linkBox!: HTMLElement;
  private _list!: HTMLElement;
}
