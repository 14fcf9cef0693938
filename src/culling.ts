/**
 * The idle countdown: when the platform announces that this notebook will be
 * stopped for being idle, the owner (or an editor) sees a notification and a
 * status-bar countdown with a "Keep running" action, instead of losing the
 * notebook by surprise.
 */
import { Notification } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';
import { CguAPI, errorMessage } from './api';
import { h } from './dom';
import { cullingLabel, cullingPollSeconds } from './format';
import { ICullingStatus } from './tokens';

export class CullingWatch {
  constructor(private readonly status: CullingStatusItem) {}

  /** Ask the culler now and then; stops when the page is closed. */
  start(): void {
    void this.poll();
  }

  async keepRunning(): Promise<void> {
    try {
      const answer = await CguAPI.keepRunning();
      this.dismiss();
      Notification.success(answer.message, { autoClose: 4000 });
    } catch (error) {
      Notification.error(errorMessage(error), { autoClose: 8000 });
    }
    await this.refresh();
  }

  private async poll(): Promise<void> {
    if (!document.hidden) {
      await this.refresh();
    }
    window.setTimeout(
      () => void this.poll(),
      cullingPollSeconds(this.latest) * 1000
    );
  }

  private async refresh(): Promise<void> {
    try {
      this.latest = await CguAPI.culling();
    } catch {
      this.latest = null; // the culler cannot be asked now; try again later
    }
    this.status.setStatus(this.latest);
    if (this.latest?.action === 'warn' && this.latest.message) {
      this.announce(this.latest);
    } else {
      this.dismiss();
    }
  }

  private announce(status: ICullingStatus): void {
    if (this.notification !== null && this.announced === status.stop_at) {
      return;
    }
    this.dismiss();
    this.announced = status.stop_at;
    this.notification = Notification.warning(status.message, {
      autoClose: false,
      actions: [
        {
          label: 'Keep running',
          caption: 'Count now as activity and cancel the stop',
          displayType: 'accent',
          callback: () => void this.keepRunning()
        }
      ]
    });
  }

  private dismiss(): void {
    if (this.notification !== null) {
      Notification.dismiss(this.notification);
      this.notification = null;
      this.announced = null;
    }
  }

  private latest: ICullingStatus | null = null;
  private notification: string | null = null;
  private announced: string | null = null;
}

/** The status-bar countdown ("Idle: stops in 4:07"), a button that keeps the notebook running. */
export class CullingStatusItem extends Widget {
  constructor(onKeep: () => void) {
    super();
    this.addClass('cgu-CullingStatus');
    this.button = h(
      'button',
      {
        type: 'button',
        class: 'cgu-CullingStatus-button',
        'data-cgu': 'culling-status',
        title: 'Keep running: count now as activity and cancel the stop',
        onclick: onKeep
      },
      ''
    ) as HTMLButtonElement;
    this.node.appendChild(this.button);
    this.hide();
    this.timer = window.setInterval(() => this.tick(), 1000);
  }

  setStatus(status: ICullingStatus | null): void {
    this.current = status;
    this.tick();
  }

  dispose(): void {
    window.clearInterval(this.timer);
    super.dispose();
  }

  private tick(): void {
    const label = this.current ? cullingLabel(this.current, Date.now()) : null;
    this.setHidden(label === null);
    this.button.textContent = label ?? '';
  }

  private readonly button: HTMLButtonElement;
  private readonly timer: number;
  private current: ICullingStatus | null = null;
}
