/**
 * The student's status-bar item while their hand is up: "Help: waiting
 * (position 2)" with Cancel, then "Ana is helping you" with Thanks (which
 * ends the help and the helper's access). Hidden otherwise.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import { h, replaceChildren } from '../dom';
import {
  IHelpRequest,
  ownOpenRequest,
  ownStatusText,
  ownStatusTitle
} from './format';
import { HelpModel } from './model';

export class HelpStatusItem extends Widget {
  constructor(
    private readonly _model: HelpModel,
    private readonly _trans: TranslationBundle,
    /** End my request (Thanks or Cancel); reports its own failure. */
    private readonly _end: (request: IHelpRequest) => Promise<void>
  ) {
    super();
    this.addClass('cgu-HelpStatus');
    this.node.dataset.cgu = 'help-status';
    _model.changed.connect(this._render, this);
    this._render();
  }

  /** Whether there is something to show. */
  get active(): boolean {
    return ownOpenRequest(this._model.overview) !== null;
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._model.changed.disconnect(this._render, this);
    super.dispose();
  }

  private _render(): void {
    const request = ownOpenRequest(this._model.overview);
    this.setHidden(request === null);
    if (!request) {
      replaceChildren(this.node);
      return;
    }
    const trans = this._trans;
    const helping = request.state === 'helping';
    this.node.dataset.state = request.state;
    this.node.title = ownStatusTitle(request, trans);
    replaceChildren(
      this.node,
      h(
        'span',
        { class: 'jp-StatusBar-TextItem', 'data-cgu': 'help-status-text' },
        ownStatusText(request, trans)
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'cgu-HelpStatus-button',
          'data-cgu': helping ? 'help-thanks' : 'help-cancel',
          title: helping
            ? trans.__('The help is over: their access to your notebook ends')
            : trans.__('Lower your hand'),
          onclick: (event: Event) => {
            const button = event.currentTarget as HTMLButtonElement;
            button.disabled = true;
            void this._end(request).finally(() => {
              button.disabled = false;
            });
          }
        },
        helping ? trans.__('Thanks') : trans.__('Cancel')
      )
    );
  }
}
