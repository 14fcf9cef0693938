/**
 * The Help queue panel (right sidebar) of a course's teacher and TAs: per
 * course, its figures (queue length, median wait, median help time) and its
 * open requests, each with Take (which shares the student's notebook with me
 * and opens it live in a new tab) or, once taken, Open and Done.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { Poll } from '@lumino/polling';
import { Widget } from '@lumino/widgets';
import { errorMessage } from '../api';
import { h, replaceChildren } from '../dom';
import { repaintPoll } from '../polling';
import { figuresText, IHelpQueue, IHelpRequest, requestLine } from './format';
import { HelpModel } from './model';

export interface IHelpPanelOptions {
  model: HelpModel;
  trans: TranslationBundle;
  /** Take a request and open its notebook. */
  take: (request: IHelpRequest) => Promise<void>;
  /** Open a taken request's notebook again. */
  open: (request: IHelpRequest) => void;
  /** End a request (Done). */
  done: (request: IHelpRequest) => Promise<void>;
  /** Who I am (my own taken requests get Open). */
  me: string;
}

export class HelpPanel extends Widget {
  constructor(private readonly _o: IHelpPanelOptions) {
    super();
    this.addClass('cgu-HelpPanel');
    this.node.dataset.cgu = 'help-panel';
    const trans = _o.trans;
    this._list = h('div', {
      class: 'cgu-HelpPanel-list',
      role: 'region',
      'aria-label': trans.__('Help requests')
    });
    this._error = h('p', {
      class: 'cgu-Help-error',
      role: 'alert',
      'data-cgu': 'help-panel-error'
    });
    replaceChildren(
      this.node,
      h(
        'div',
        { class: 'cgu-Course-header' },
        h('h2', { class: 'cgu-Course-title' }, trans.__('Help queue')),
        h(
          'button',
          {
            type: 'button',
            class: 'jp-Button jp-mod-styled',
            'data-cgu': 'help-refresh',
            onclick: () => void _o.model.refresh()
          },
          trans.__('Refresh')
        )
      ),
      this._error,
      this._list
    );
    // "waiting 3 min" moves on between answers while shown.
    this._clock = repaintPoll('cgu-lab:help-clock', 15, () => this._render());
    _o.model.changed.connect(this._render, this);
    this._render();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._o.model.changed.disconnect(this._render, this);
    this._clock.dispose();
    super.dispose();
  }

  protected onAfterShow(): void {
    void this._o.model.refresh();
    void this._clock.start();
  }

  protected onAfterHide(): void {
    void this._clock.stop();
  }

  private _render(): void {
    const { model, trans } = this._o;
    const error = model.error;
    this._error.textContent = error ? errorMessage(error, trans) : '';
    this._error.hidden = !error;
    const overview = model.overview;
    if (!overview) {
      return;
    }
    if (overview.queues.length === 0) {
      replaceChildren(
        this._list,
        h(
          'p',
          { class: 'cgu-Course-empty' },
          trans.__('You help in no course.')
        )
      );
      return;
    }
    const now = Date.now();
    replaceChildren(
      this._list,
      ...overview.queues.map(queue => this._queue(queue, now))
    );
  }

  private _queue(queue: IHelpQueue, now: number): HTMLElement {
    const trans = this._o.trans;
    return h(
      'section',
      { class: 'cgu-HelpPanel-course', 'data-group': queue.group },
      h('h3', {}, queue.group),
      h(
        'p',
        { class: 'cgu-Help-hint', 'data-cgu': 'help-figures' },
        figuresText(queue, trans)
      ),
      queue.requests.length
        ? h(
            'ul',
            { class: 'cgu-HelpPanel-requests' },
            ...queue.requests.map(r => this._request(r, now))
          )
        : h('p', { class: 'cgu-Course-empty' }, trans.__('Nobody is waiting.'))
    );
  }

  private _request(request: IHelpRequest, now: number): HTMLElement {
    const trans = this._o.trans;
    const buttons: HTMLElement[] = [];
    if (request.state === 'waiting') {
      buttons.push(
        this._button(trans.__('Take'), 'help-take', () => this._o.take(request))
      );
    } else {
      if (request.helper === this._o.me) {
        buttons.push(
          this._button(trans.__('Open'), 'help-open', async () =>
            this._o.open(request)
          )
        );
      }
      buttons.push(
        this._button(trans.__('Done'), 'help-done', () => this._o.done(request))
      );
    }
    return h(
      'li',
      {
        class: 'cgu-HelpPanel-request',
        'data-cgu': 'help-request',
        'data-student': request.student.name,
        'data-state': request.state
      },
      h('div', {}, requestLine(request, now, trans)),
      request.question
        ? h('div', { class: 'cgu-HelpPanel-question' }, request.question)
        : null,
      h(
        'div',
        { class: 'cgu-Help-hint' },
        request.access === 'read'
          ? trans.__('You may watch only')
          : trans.__('You may edit')
      ),
      h('div', { class: 'cgu-HelpPanel-actions' }, ...buttons)
    );
  }

  private _button(
    label: string,
    cgu: string,
    action: () => Promise<void>
  ): HTMLButtonElement {
    return h(
      'button',
      {
        type: 'button',
        class: 'jp-Button jp-mod-styled',
        'data-cgu': cgu,
        onclick: (event: Event) => {
          const button = event.currentTarget as HTMLButtonElement;
          button.disabled = true;
          void action().finally(() => {
            button.disabled = false;
          });
        }
      },
      label
    );
  }

  private _list: HTMLElement;
  private _error: HTMLElement;
  private _clock: Poll;
}
