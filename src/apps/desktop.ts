/**
 * The Linux desktop in a JupyterLab tab: noVNC's RFB client on the desktop's
 * websocket, through the notebook's own origin and proxy.
 *
 * The owner and editors drive it (jupyter-server-proxy's `desktop/`, which
 * starts the desktop on first use); a read-only viewer watches it on the
 * server's view-only channel, with noVNC's `viewOnly` set as well, though the
 * server is what keeps their keys out. `data-state` on the panel says
 * connecting / connected / disconnected, for people and for tests.
 */
import RFB from '@novnc/novnc';
import { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import { h } from '../dom';
import { DesktopClipboard } from './clipboard';

export interface IDesktopOptions {
  url: string;
  viewOnly: boolean;
  trans: TranslationBundle;
}

export class DesktopPanel extends Widget {
  constructor(private readonly options: IDesktopOptions) {
    super();
    this.addClass('cgu-DesktopPanel');
    this.id = 'cgu-lab-desktop';
    this.title.closable = true;
    const { trans, viewOnly } = options;
    this.title.label = viewOnly
      ? trans.__('Desktop (view only)')
      : trans.__('Desktop');
    this.status = h('div', { class: 'cgu-DesktopPanel-status' });
    this.retry = h(
      'button',
      {
        class: 'jp-Button jp-mod-styled jp-mod-accept',
        onclick: () => this.connect()
      },
      trans.__('Connect again')
    );
    this.screen = h('div', { class: 'cgu-DesktopPanel-screen' });
    this.node.append(
      h('div', { class: 'cgu-DesktopPanel-bar' }, this.status, this.retry),
      this.screen
    );
  }

  /** The connection, while there is one (tests and the benchmark read it). */
  get client(): RFB | null {
    return this.rfb;
  }

  connect(): void {
    this.rfb?.disconnect();
    this.clipboard?.dispose();
    this.screen.replaceChildren();
    const { trans, url, viewOnly } = this.options;
    this.setState(
      'connecting',
      viewOnly
        ? trans.__('Connecting to the desktop (view only)…')
        : trans.__('Starting the desktop…')
    );
    const rfb = new RFB(this.screen, url, { shared: true });
    rfb.viewOnly = viewOnly;
    rfb.scaleViewport = true;
    rfb.resizeSession = false;
    rfb.background = 'var(--jp-layout-color2)';
    rfb.addEventListener('connect', () => {
      this.setState(
        'connected',
        viewOnly
          ? trans.__(
              'Watching the desktop: only its owner and editors can use it.'
            )
          : trans.__('Connected.')
      );
    });
    rfb.addEventListener('disconnect', event => {
      const clean = (event as CustomEvent<{ clean: boolean }>).detail?.clean;
      this.setState(
        'disconnected',
        viewOnly && !clean
          ? trans.__(
              'The desktop is not running, or it stopped: its owner or an editor must open it.'
            )
          : trans.__('The desktop was disconnected.')
      );
    });
    this.rfb = rfb;
    this.clipboard = viewOnly ? null : new DesktopClipboard(rfb, this.node);
  }

  dispose(): void {
    this.clipboard?.dispose();
    this.rfb?.disconnect();
    this.rfb = null;
    super.dispose();
  }

  protected onAfterAttach(): void {
    if (!this.rfb) {
      this.connect();
    }
  }

  protected onActivateRequest(): void {
    this.rfb?.focus();
  }

  private setState(state: string, text: string): void {
    this.node.dataset.state = state;
    this.status.textContent = text;
    this.retry.style.display = state === 'disconnected' ? '' : 'none';
  }

  private rfb: RFB | null = null;
  private clipboard: DesktopClipboard | null = null;
  private readonly status: HTMLDivElement;
  private readonly retry: HTMLButtonElement;
  private readonly screen: HTMLDivElement;
}
