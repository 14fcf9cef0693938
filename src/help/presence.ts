/**
 * "Live: ana editing · bo watching" in the status bar of a notebook shared
 * live: who else has one of this server's documents open, as the server
 * extension counts the collaboration connections (`cgu-lab/collaboration`,
 * editors and viewers told apart by what the server lets them send).
 * JupyterLab's collaboration extension shows their cursors and names in the
 * documents; this says who is here at all, and who only watches.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { Poll } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';
import { requestAPI, requestsEnded } from '../api';
import { pollFrequency } from '../polling';
import { ICollaborationSummary, othersHere, presenceText } from './format';

export class PresenceItem extends Widget {
  constructor(
    private readonly _me: string,
    private readonly _trans: TranslationBundle,
    private readonly _fetch: () => Promise<ICollaborationSummary> = () =>
      requestAPI<ICollaborationSummary>('collaboration')
  ) {
    super();
    this.addClass('cgu-Presence');
    this.addClass('jp-StatusBar-TextItem');
    this.node.dataset.cgu = 'collaboration-presence';
    this._poll = new Poll({
      auto: false,
      factory: () => this._load(),
      frequency: pollFrequency(10, 120),
      name: 'cgu-lab:presence',
      standby: () => (requestsEnded() ? true : 'when-hidden')
    });
    this.setHidden(true);
  }

  get active(): boolean {
    return this._text !== '';
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  start(): void {
    void this._poll.start();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._poll.dispose();
    Signal.clearData(this);
    super.dispose();
  }

  private async _load(): Promise<void> {
    let text = '';
    let title = '';
    try {
      const others = othersHere(await this._fetch(), this._me);
      text = presenceText(others, this._trans);
      title = this._trans.__(
        'In this notebook with you now: %1 editing, %2 watching',
        others.editors.length,
        others.viewers.length
      );
    } finally {
      if (!this.isDisposed && text !== this._text) {
        this._text = text;
        this.node.textContent = text;
        this.node.title = title;
        this.setHidden(!text);
        this._changed.emit();
      }
    }
  }

  private _poll: Poll;
  private _text = '';
  private _changed = new Signal<this, void>(this);
}
