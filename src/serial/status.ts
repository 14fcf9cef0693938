/**
 * The status-bar item of the Serial feature: which port is attached and its
 * byte counters ("Serial ttyWEB0 ↑ 1.2 KiB ↓ 34 B"); a click opens the
 * dialog. Hidden while nothing is attached.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import { h } from '../dom';
import { countersText, portLabel } from './format';
import { SerialManager } from './manager';

export class SerialStatusItem extends Widget {
  constructor(
    private readonly manager: SerialManager,
    private readonly trans: TranslationBundle,
    onClick: () => void
  ) {
    super();
    this.addClass('cgu-SerialStatus');
    this.button = h('button', {
      type: 'button',
      class: 'jp-StatusBar-TextItem',
      style: 'border:none;background:none;cursor:pointer;color:inherit',
      'data-cgu': 'serial-status',
      onclick: onClick
    });
    this.node.appendChild(this.button);
    manager.changed.connect(this.render, this);
    this.render();
  }

  dispose(): void {
    this.manager.changed.disconnect(this.render, this);
    super.dispose();
  }

  /** Whether there is something to show (the status bar hides the item otherwise). */
  get active(): boolean {
    return this.manager.connection !== null;
  }

  private render(): void {
    const c = this.manager.connection;
    this.setHidden(c === null);
    if (!c) {
      this.button.textContent = '';
      return;
    }
    const name = c.attached?.name ?? '…';
    const state =
      c.state === 'reconnecting' ? ` ${this.trans.__('(reconnecting)')}` : '';
    this.button.textContent = this.trans.__(
      'Serial %1 %2%3',
      name,
      countersText(c.toDevice, c.fromDevice),
      state
    );
    this.button.title = this.trans.__(
      '%1 is attached as %2. Click for details or to disconnect.',
      portLabel(c.info, this.trans),
      c.attached?.path ?? name
    );
    this.node.dataset.state = c.state;
  }

  private readonly button: HTMLButtonElement;
}
