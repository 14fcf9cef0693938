/**
 * The idle countdown: when the platform announces that this notebook will be
 * stopped for being idle, the owner (or an editor) sees a notification and a
 * status-bar countdown with a "Keep running" action, instead of losing the
 * notebook by surprise.
 *
 * One answer drives both (see idle.ts): the culler reads the kernels when
 * asked, so a cell run a moment ago ends the warning at the next poll (a
 * `@lumino/polling` Poll: every 30 s, every 5 s while a stop counts down, and
 * at once when a cell finishes running). Between answers the status bar
 * counts down on its own, every second while the page is visible.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { NotebookActions } from '@jupyterlab/notebook';
import { IStatusBar } from '@jupyterlab/statusbar';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { Poll } from '@lumino/polling';
import { Widget } from '@lumino/widgets';
import { registerCommand } from '../commands';
import { CguAPI, errorMessage } from '../api';
import { h } from '../dom';
import { pollFrequency, repaintPoll } from '../polling';
import { cullingLabel, cullingPollSeconds } from './format';
import { exemptText, idleWarningText, serverSkew } from './idle';
import { ICullingStatus } from '../apiTypes';
import { CommandIDs, DOMAIN, ICguLabSession } from '../tokens';

/** The longest wait between two questions after failures, in seconds. */
const MAX_BACKOFF = 5 * 60;

export class CullingWatch {
  constructor(
    private readonly status: CullingStatusItem,
    private readonly trans: TranslationBundle,
    private readonly fetch: () => Promise<ICullingStatus> = CguAPI.culling
  ) {
    this._poll = new Poll({
      auto: false,
      factory: () => this.refresh(),
      frequency: pollFrequency(cullingPollSeconds(null), MAX_BACKOFF),
      name: 'cgu-lab:culling',
      standby: 'when-hidden'
    });
  }

  /** Ask the culler now and then; stops when the page is closed. */
  start(): void {
    void this._poll.start();
  }

  /** Ask again now (a cell just ran: the warning may be over). */
  checkSoon(): void {
    void this._poll.refresh();
  }

  async keepRunning(): Promise<void> {
    try {
      const answer = await CguAPI.keepRunning();
      this.dismiss();
      Notification.success(answer.message, { autoClose: 4000 });
    } catch (error) {
      Notification.error(errorMessage(error, this.trans), { autoClose: 8000 });
    }
    await this._poll.refresh();
  }

  dispose(): void {
    this._poll.dispose();
  }

  /** One answer of the culler, shown. Rejects (the poll backs off) when it cannot be asked. */
  async refresh(): Promise<void> {
    let latest: ICullingStatus | null = null;
    try {
      latest = await this.fetch();
    } catch (error) {
      this.status.setStatus(null, 0);
      this.dismiss();
      throw error; // stopped, unreachable: platform.ts says so; ask again later
    }
    const skew = serverSkew(latest, Date.now());
    this.status.setStatus(latest, skew, exemptText(latest, this.trans));
    // (An unchanged frequency is ignored by the poll.)
    this._poll.frequency = pollFrequency(
      cullingPollSeconds(latest),
      MAX_BACKOFF
    );
    if (latest.action === 'warn') {
      this.announce(latest, skew);
    } else {
      this.dismiss();
    }
  }

  private announce(status: ICullingStatus, skew: number): void {
    const text = idleWarningText(status, Date.now() + skew, this.trans);
    if (!text) {
      this.dismiss();
      return;
    }
    if (this.notification !== null && this.announced === status.stop_at) {
      if (text !== this.shown) {
        Notification.update({ id: this.notification, message: text });
        this.shown = text;
      }
      return;
    }
    this.dismiss();
    this.announced = status.stop_at;
    this.shown = text;
    this.notification = Notification.warning(text, {
      autoClose: false,
      actions: [
        {
          label: this.trans.__('Keep running'),
          caption: this.trans.__('Count now as activity and cancel the stop'),
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
      this.shown = '';
    }
  }

  private readonly _poll: Poll;
  private notification: string | null = null;
  private announced: string | null = null;
  private shown = '';
}

/** The status-bar countdown ("Idle: stops in 4:07"), a button that keeps the notebook running. */
export class CullingStatusItem extends Widget {
  constructor(
    onKeep: () => void,
    private readonly trans: TranslationBundle
  ) {
    super();
    this.addClass('cgu-CullingStatus');
    this.button = h(
      'button',
      {
        type: 'button',
        class: 'cgu-CullingStatus-button',
        'data-cgu': 'culling-status',
        title: trans.__(
          'Keep running: count now as activity and cancel the stop'
        ),
        onclick: onKeep
      },
      ''
    ) as HTMLButtonElement;
    this.node.appendChild(this.button);
    this.hide();
    this.clock = repaintPoll('cgu-lab:culling-clock', 1, () => this.tick());
  }

  /** The culler's answer, with the server's clock minus ours (ms). */
  setStatus(
    status: ICullingStatus | null,
    skew: number,
    exempt: string | null = null
  ): void {
    this.current = status;
    this.skew = skew;
    this.node.dataset.exempt = exempt ?? '';
    // Count down only while a stop is announced.
    void (this.tick() ? this.clock.start() : this.clock.stop());
  }

  dispose(): void {
    this.clock.dispose();
    super.dispose();
  }

  /** Show the time left; false when there is none to show. */
  private tick(): boolean {
    const label = this.current
      ? cullingLabel(this.current, Date.now() + this.skew, this.trans)
      : null;
    this.setHidden(label === null);
    this.button.textContent = label ?? '';
    return label !== null;
  }

  private readonly button: HTMLButtonElement;
  private readonly clock: Poll;
  private current: ICullingStatus | null = null;
  private skew = 0;
}

/**
 * The idle countdown: a warning with "Keep running" before the platform stops
 * an idle notebook, for those who may use it (owner and editors).
 */
export const cullingPlugin: JupyterFrontEndPlugin<void> = {
  id: 'cgu-lab:culling',
  description:
    'Warns before an idle notebook is stopped and offers to keep it running.',
  autoStart: true,
  requires: [ICguLabSession],
  optional: [IStatusBar, ICommandPalette, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    session: ICguLabSession,
    statusBar: IStatusBar | null,
    palette: ICommandPalette | null,
    translator: ITranslator | null
  ) => {
    if (!session.info || session.access === 'read') {
      return;
    }
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    const item = new CullingStatusItem(() => void watch.keepRunning(), trans);
    const watch = new CullingWatch(item, trans);
    statusBar?.registerStatusItem('cgu-lab:culling', {
      item,
      align: 'left',
      rank: 0
    });
    registerCommand(
      app,
      CommandIDs.keepRunning,
      {
        label: trans.__('Keep This Notebook Running'),
        caption: trans.__(
          'Count now as activity so the idle culler does not stop it'
        ),
        execute: () => watch.keepRunning()
      },
      { palette }
    );
    // A cell that ran is activity: the countdown must end now, not in 30 s.
    NotebookActions.executed.connect(() => watch.checkSoon());
    watch.start();
  }
};
