/**
 * "Shared with me": a left-sidebar panel listing the notebooks and files other
 * people shared with the owner of this notebook server, each with a link that
 * opens it in a new tab.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import { CguAPI, errorMessage } from '../api';
import { h, replaceChildren } from '../dom';
import { absoluteShareUrl, countdownText } from '../format';
import { accessLabel, notebookStateLabel, scopeLabel } from './format';
import { ISharedWithMe } from '../apiTypes';

/** The panel's content. */
export class SharedWithMePanel extends Widget {
  constructor(options: {
    trans: TranslationBundle;
    fetch?: () => Promise<ISharedWithMe[]>;
    origin?: string;
  }) {
    super();
    const trans = options.trans;
    this._trans = trans;
    this._fetch = options.fetch ?? CguAPI.sharedWithMe;
    this._origin = options.origin ?? window.location.origin;
    this.addClass('cgu-SharedWithMe');
    this.node.dataset.cgu = 'shared-with-me';
    this._list = h('div', {
      class: 'cgu-SharedWithMe-list',
      role: 'region',
      'aria-label': trans.__('Notebooks shared with me')
    });
    this._status = h('div', {
      class: 'cgu-SharedWithMe-status',
      role: 'status',
      'aria-live': 'polite'
    });
    replaceChildren(
      this.node,
      h(
        'div',
        { class: 'cgu-SharedWithMe-header' },
        h(
          'h2',
          { class: 'cgu-SharedWithMe-title' },
          trans.__('Shared with me')
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'jp-Button jp-mod-styled cgu-SharedWithMe-refresh',
            'data-cgu': 'shared-with-me-refresh',
            onclick: () => void this.refresh()
          },
          trans.__('Refresh')
        )
      ),
      this._status,
      this._list
    );
  }

  /** Load the list again. */
  async refresh(): Promise<void> {
    const trans = this._trans;
    this._status.textContent = trans.__('Loading…');
    try {
      this._items = await this._fetch();
      this._error = null;
      this._status.textContent = trans.__(
        'Updated at %1.',
        new Date().toLocaleTimeString()
      );
    } catch (error) {
      this._error = errorMessage(error, trans);
      this._status.textContent = '';
    }
    this._render();
  }

  /** Refresh each time the panel is shown. */
  protected onAfterShow(): void {
    void this.refresh();
  }

  private _render(): void {
    const trans = this._trans;
    if (this._error) {
      replaceChildren(
        this._list,
        h('p', { class: 'cgu-SharedWithMe-error', role: 'alert' }, this._error)
      );
      return;
    }
    if (!this._items || this._items.length === 0) {
      replaceChildren(
        this._list,
        h(
          'p',
          {
            class: 'cgu-SharedWithMe-empty',
            'data-cgu': 'shared-with-me-empty'
          },
          trans.__('Nothing is shared with you yet.')
        )
      );
      return;
    }
    const now = Date.now();
    replaceChildren(
      this._list,
      h(
        'ul',
        { class: 'cgu-SharedWithMe-items' },
        ...this._items.map(item =>
          sharedItemRow(item, now, this._origin, trans)
        )
      )
    );
  }

  private _trans: TranslationBundle;
  private _fetch: () => Promise<ISharedWithMe[]>;
  private _origin: string;
  private _items: ISharedWithMe[] | null = null;
  private _error: string | null = null;
  private _list: HTMLElement;
  private _status: HTMLElement;
}

function ownerLine(item: ISharedWithMe, trans: TranslationBundle): HTMLElement {
  return h(
    'div',
    { class: 'cgu-SharedWithMe-line' },
    h(
      'span',
      { class: 'cgu-SharedWithMe-owner', title: item.owner },
      item.owner_display_name || item.owner
    ),
    h(
      'span',
      { class: `cgu-Badge cgu-Badge-${item.access}` },
      accessLabel(item.access, trans)
    )
  );
}

function scopeLine(item: ISharedWithMe, trans: TranslationBundle): HTMLElement {
  return h(
    'div',
    { class: 'cgu-SharedWithMe-line' },
    h('span', { class: 'cgu-SharedWithMe-notebook' }, item.notebook),
    h('span', { class: 'cgu-SharedWithMe-path' }, scopeLabel(item.path, trans))
  );
}

function metaLine(
  item: ISharedWithMe,
  now: number,
  trans: TranslationBundle
): HTMLElement {
  return h(
    'div',
    { class: 'cgu-SharedWithMe-line cgu-SharedWithMe-meta' },
    h(
      'span',
      {
        class: `cgu-State cgu-State-${item.state}`,
        'data-state': item.state
      },
      notebookStateLabel(item.state, trans)
    ),
    h(
      'span',
      {
        title: item.expires_at
          ? new Date(item.expires_at).toLocaleString()
          : trans.__('This share does not end.')
      },
      countdownText(item.expires_at, now, trans)
    )
  );
}

function openLink(
  item: ISharedWithMe,
  origin: string,
  trans: TranslationBundle
): HTMLElement {
  const what = item.path
    ? trans.__('%1 / %2', item.notebook, item.path)
    : item.notebook;
  return h(
    'a',
    {
      class: 'cgu-SharedWithMe-open',
      href: absoluteShareUrl(item.url, origin),
      target: '_blank',
      rel: 'noopener noreferrer',
      'data-cgu': 'shared-item-open',
      'aria-label': trans.__(
        'Open %1 of %2 (opens a new tab)',
        what,
        item.owner_display_name || item.owner
      )
    },
    trans.__('Open')
  );
}

function sharedItemRow(
  item: ISharedWithMe,
  now: number,
  origin: string,
  trans: TranslationBundle
): HTMLElement {
  return h(
    'li',
    {
      class: 'cgu-SharedWithMe-item',
      'data-cgu': 'shared-item',
      'data-share-id': item.id,
      'data-owner': item.owner
    },
    ownerLine(item, trans),
    scopeLine(item, trans),
    metaLine(item, now, trans),
    openLink(item, origin, trans)
  );
}
