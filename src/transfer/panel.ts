/**
 * The progress panel of an upload or an extraction: a small box at the bottom
 * right of the page (not a dialog: the user goes on working meanwhile) with
 * the total as a bar and a line of figures, the files being sent each with
 * its own bar, those that failed with why, and Cancel, which becomes Close
 * once the transfer ended. Native `<progress>` elements, so screen readers
 * announce them and no style sheet is needed.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import { h, replaceChildren } from '../dom';
import { formatBytes } from '../format';
import { progressText, rateText } from './format';
import { IFileProgress, IUploadProgress } from './upload';

/** Files listed at most (those in flight first, then failures). */
const SHOWN = 8;
/** A finished panel closes itself after this long, unless something failed. */
const CLOSE_AFTER_MS = 15_000;

const BOX =
  'position:fixed;right:16px;bottom:40px;z-index:10000;width:380px;max-width:90vw;' +
  'background:var(--jp-layout-color1);color:var(--jp-ui-font-color1);' +
  'border:1px solid var(--jp-border-color1);border-radius:4px;padding:10px 12px;' +
  'box-shadow:var(--jp-elevation-z4);font-size:var(--jp-ui-font-size1)';
const BAR = 'width:100%;height:10px';

export class TransferPanel extends Widget {
  constructor(
    private _trans: TranslationBundle,
    title: string
  ) {
    super();
    this.addClass('cgu-TransferPanel');
    this.node.dataset.cgu = 'transfer-panel';
    this.node.setAttribute('role', 'status');
    this.node.style.cssText = BOX;
    this._title = h('strong', { 'data-cgu': 'transfer-title' }, title);
    this._bar = h('progress', {
      'data-cgu': 'transfer-total',
      max: '1',
      value: '0',
      style: BAR
    });
    this._figures = h('div', { 'data-cgu': 'transfer-figures' });
    this._list = h('ul', {
      'data-cgu': 'transfer-files',
      style:
        'list-style:none;margin:6px 0;padding:0;max-height:40vh;overflow:auto'
    });
    this._message = h('div', {
      'data-cgu': 'transfer-message',
      style: 'margin:6px 0'
    });
    this._button = h(
      'button',
      {
        class: 'jp-Button jp-mod-styled jp-mod-reject',
        'data-cgu': 'transfer-cancel',
        onclick: () => this._buttonClicked()
      },
      _trans.__('Cancel')
    );
    replaceChildren(
      this.node,
      this._title,
      this._bar,
      this._figures,
      this._list,
      this._message,
      h('div', { style: 'text-align:right' }, this._button)
    );
  }

  /** Show an upload's progress. */
  showProgress(progress: IUploadProgress): void {
    if (this._started === null) {
      this._started = Date.now(); // the rate counts from the first byte, not the checks
    }
    this._bar.max = Math.max(progress.total, 1);
    this._bar.value = progress.sent;
    const elapsed = Date.now() - this._started;
    const figures = progressText(
      this._trans,
      progress.sent,
      progress.total,
      progress.done,
      progress.files.length
    );
    this._figures.textContent = `${figures} · ${rateText(progress.sent, elapsed)}`;
    const active = progress.files.filter(
      f => f.state === 'sending' || f.state === 'retrying'
    );
    const failed = progress.files.filter(f => f.state === 'failed');
    replaceChildren(
      this._list,
      ...[...active, ...failed].slice(0, SHOWN).map(f => this._row(f))
    );
  }

  /** The panel's heading: what is being transferred. */
  setTitle(text: string): void {
    this._title.textContent = text;
  }

  /** A line under the bar: what happens now ("Checking…", "Extracting…"). */
  showStatus(text: string, busy = true): void {
    this._message.textContent = text;
    if (busy) {
      this._bar.removeAttribute('value'); // an indeterminate bar
    }
  }

  /** The transfer ended: say how, and turn Cancel into Close. */
  finish(text: string, ok: boolean): void {
    this._ended = true;
    this._message.textContent = text;
    this._message.dataset.outcome = ok ? 'done' : 'failed';
    this._message.style.color = ok ? '' : 'var(--jp-error-color1)';
    this._button.textContent = this._trans.__('Close');
    this._button.className = 'jp-Button jp-mod-styled jp-mod-accept';
    this._button.dataset.cgu = 'transfer-close';
    if (!this._bar.hasAttribute('value')) {
      this._bar.value = ok ? this._bar.max : 0; // no longer busy
    }
    if (ok) {
      this._bar.value = this._bar.max;
      window.setTimeout(() => this.dispose(), CLOSE_AFTER_MS);
    }
  }

  /** Shown on the page, at the bottom right. */
  open(): void {
    Widget.attach(this, document.body);
  }

  private _row(file: IFileProgress): HTMLLIElement {
    const state =
      file.state === 'retrying'
        ? this._trans.__('connection lost, resuming…')
        : file.state === 'failed'
          ? (file.error ?? this._trans.__('failed'))
          : `${formatBytes(file.sent)} / ${formatBytes(file.size)}`;
    return h(
      'li',
      {
        'data-cgu': 'transfer-file',
        'data-state': file.state,
        'data-path': file.path
      },
      h(
        'div',
        { style: 'overflow:hidden;text-overflow:ellipsis;white-space:nowrap' },
        file.path
      ),
      h('progress', {
        max: String(Math.max(file.size, 1)),
        value: String(file.sent),
        style: BAR
      }),
      h('small', {}, state)
    );
  }

  private _buttonClicked(): void {
    if (this._ended) {
      this.dispose();
      return;
    }
    this._button.disabled = true;
    this.showStatus(this._trans.__('Cancelling…'), false);
    this.onCancel();
  }

  /** What Cancel does (set by whoever runs the transfer). */
  onCancel: () => void = () => undefined;

  private _title: HTMLElement;
  private _bar: HTMLProgressElement;
  private _figures: HTMLDivElement;
  private _list: HTMLUListElement;
  private _message: HTMLDivElement;
  private _button: HTMLButtonElement;
  private _ended = false;
  private _started: number | null = null;
}
