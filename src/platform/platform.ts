/**
 * The page's link with the platform, watched: a `@lumino/polling` Poll on
 * `cgu-lab/info` (and every other answer of the extension's API) tells the
 * user, once and in words they can act on, when
 *
 * - the notebook stopped (the idle culler, its server died, someone stopped
 *   it): "Your notebook stopped: … — Restart", which opens the controller's
 *   start page for this notebook, instead of JupyterLab's generic "Server
 *   Connection Error" (this module also answers JupyterLab's connection-lost
 *   hook, see `connectionPlugin`);
 * - the visitor's share was revoked or narrowed: "Access revoked" with the way
 *   back to the portal, and the status bar says so;
 * - the log-in of this origin expired, or the platform cannot be reached.
 */
import { Dialog, Notification } from '@jupyterlab/apputils';
import { ServerConnection } from '@jupyterlab/services';
import type { TranslationBundle } from '@jupyterlab/translation';
import { PromiseDelegate } from '@lumino/coreutils';
import { Poll } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';
import { CguAPI, endRequests, IProblemReport, platformProblem } from '../api';
import { pollFrequency } from '../polling';
import { ServiceGate } from './gate';
import {
  accessChangeText,
  PlatformProblem,
  problemOf,
  revokedDialogText,
  stoppedDialogText
} from './state';
import { Access, ICguLabSession, IServerInfo } from '../tokens';

/** How often the page asks, in seconds, while all is well. */
const INTERVAL = 15;

/** Consecutive network failures before the user is told. */
const UNREACHABLE_AFTER = 2;

/**
 * After the notebook's server did not answer the proxy: ask every second, up
 * to this many times (the platform notices a dead server within seconds).
 */
const SOON_CHECKS = 30;
const SOON = { interval: 1000, backoff: false, max: 1000 };

export class PlatformWatch {
  constructor(options: {
    session: ICguLabSession;
    trans: TranslationBundle;
    fetchInfo?: () => Promise<IServerInfo>;
    interval?: number;
    /** JupyterLab's own requests (gate.ts): held while stopped, ended with the access. */
    gate?: Pick<ServiceGate, 'hold' | 'end' | 'open'>;
  }) {
    this._info = options.session.info;
    this._access = options.session.access ?? 'owner';
    this._trans = options.trans;
    this._fetch = options.fetchInfo ?? CguAPI.info;
    this._gate = options.gate ?? null;
    this._frequency = pollFrequency(options.interval ?? INTERVAL);
    this._poll = new Poll({
      factory: () => this._tick(),
      frequency: this._frequency,
      name: 'cgu-lab:platform',
      standby: 'when-hidden'
    });
    platformProblem.connect(this._onReport, this);
  }

  /** The user's access as last known; "revoked" once the share ended. */
  get access(): Access | 'revoked' {
    return this._access;
  }

  /** Emitted when the access changes (a share narrowed, widened or ended). */
  get accessChanged(): ISignal<this, Access | 'revoked'> {
    return this._accessChanged;
  }

  /** Where the portal is (the controller's pages), when known. */
  get portalUrl(): string | null {
    return this._info?.controller_url ?? null;
  }

  /** Ask now (JupyterLab lost its connection, or the user asked); nothing once the access ended. */
  checkNow(): Promise<void> {
    if (this._problem === 'revoked') {
      return Promise.resolve();
    }
    return this._poll.refresh();
  }

  /**
   * The notebook's server did not answer the proxy (it died a moment ago, or
   * is busy): ask now and every second for a while, so "Your notebook
   * stopped" shows as soon as the platform knows.
   */
  checkSoon(): void {
    if (this._problem !== null) {
      return;
    }
    if (this._soon === 0) {
      this._poll.frequency = SOON;
      void this._poll.refresh();
    }
    this._soon = SOON_CHECKS;
  }

  private _calmDown(): void {
    if (this._soon > 0) {
      this._soon = 0;
      this._poll.frequency = this._frequency;
    }
  }

  dispose(): void {
    platformProblem.disconnect(this._onReport, this);
    this._poll.dispose();
    Signal.clearData(this);
  }

  /* --------------------------------------------------------------- checks */

  private async _tick(): Promise<void> {
    if (this._soon > 0 && --this._soon === 0) {
      this._poll.frequency = this._frequency;
    }
    let info: IServerInfo;
    try {
      info = await this._fetch();
    } catch (error) {
      if (error instanceof ServerConnection.NetworkError) {
        this._failures += 1;
        if (this._failures >= UNREACHABLE_AFTER) {
          this._showUnreachable();
        }
      }
      // A page problem was already reported by requestAPI (_onReport); the
      // poll backs off and keeps asking, so a restart elsewhere is noticed.
      throw error;
    }
    this._healthy(info);
  }

  private _healthy(info: IServerInfo): void {
    this._failures = 0;
    this._calmDown();
    this._dismiss('unreachable');
    this._dismiss('login');
    if (this._problem === 'stopped') {
      this._problem = null;
      this._gate?.open();
      this._closeDialog();
      this._notices.set(
        'running',
        Notification.info(
          this._trans.__(
            'Your notebook is running again. Reload this page to reconnect to it.'
          ),
          {
            autoClose: false,
            actions: [
              {
                label: this._trans.__('Reload'),
                callback: () => window.location.reload()
              }
            ]
          }
        )
      );
    }
    if (info.access !== this._access && this._access !== 'revoked') {
      const text = accessChangeText(
        this._access as Access,
        info.access,
        this._trans
      );
      this._setAccess(info.access);
      if (text) {
        Notification.warning(text, {
          autoClose: false,
          actions: [
            {
              label: this._trans.__('Reload'),
              callback: () => window.location.reload()
            }
          ]
        });
      }
    }
    this._info = info;
  }

  private _onReport(_: unknown, report: IProblemReport): void {
    const problem = problemOf(report.status, report.body, window.location.href);
    if (problem) {
      this.show(problem);
    }
  }

  /** Tell the user about a problem of the page, once per occurrence. */
  show(problem: PlatformProblem): void {
    switch (problem.kind) {
      case 'stopped':
        if (this._problem !== 'stopped' && this._problem !== 'revoked') {
          this._problem = 'stopped';
          this._calmDown();
          // JupyterLab's own requests get this answer from the page until it runs again.
          this._gate?.hold({
            message: problem.message,
            code: 'notebook_stopped'
          });
          this._dismiss('running');
          void this._stoppedDialog(problem);
        }
        break;
      case 'revoked':
        if (this._problem !== 'revoked') {
          this._problem = 'revoked';
          this._calmDown();
          // Nothing of this page may go on asking: JupyterLab's services and
          // connections (gate.ts), the extension's requests and this poll.
          this._gate?.end();
          endRequests();
          this._closeDialog();
          this._setAccess('revoked');
          this._poll.stop().catch(() => undefined);
          void this._revokedDialog(problem.portalUrl ?? this.portalUrl);
        }
        break;
      case 'login':
        if (!this._notices.has('login')) {
          this._notices.set(
            'login',
            Notification.warning(
              this._trans.__(
                'Your log-in to this notebook expired. Reload the page to log in again; unsaved changes are kept in this tab until you do.'
              ),
              {
                autoClose: false,
                actions: [
                  {
                    label: this._trans.__('Reload'),
                    callback: () => window.location.reload()
                  }
                ]
              }
            )
          );
        }
        break;
    }
  }

  /* -------------------------------------------------------------- dialogs */

  private async _stoppedDialog(
    problem: Extract<PlatformProblem, { kind: 'stopped' }>
  ): Promise<void> {
    const text = stoppedDialogText(
      problem,
      this._access === 'owner',
      this._trans
    );
    const target = problem.restartUrl;
    const result = await this._launch(
      text.title,
      text.body,
      target
        ? [
            Dialog.cancelButton({ label: text.dismiss }),
            Dialog.okButton({ label: text.accept })
          ]
        : [Dialog.okButton({ label: text.dismiss })],
      'cgu-StoppedDialog'
    );
    if (result && target) {
      window.location.assign(target);
    }
  }

  private async _revokedDialog(portal: string | null): Promise<void> {
    const text = revokedDialogText(this._info, this._trans);
    const result = await this._launch(
      text.title,
      text.body,
      portal
        ? [
            Dialog.cancelButton({ label: text.dismiss }),
            Dialog.okButton({ label: text.accept })
          ]
        : [Dialog.okButton({ label: text.dismiss })],
      'cgu-RevokedDialog'
    );
    if (result && portal) {
      window.location.assign(portal);
    }
  }

  /** Show a dialog; resolves true when its accept button was pressed. */
  private async _launch(
    title: string,
    body: string,
    buttons: Dialog.IButton[],
    className: string
  ): Promise<boolean> {
    this._closeDialog();
    await clearOtherDialogs();
    const dialog = new Dialog({ title, body, buttons });
    dialog.addClass(className);
    this._dialog = dialog;
    try {
      const result = await dialog.launch();
      return result.button.accept && buttons.length > 1;
    } finally {
      if (this._dialog === dialog) {
        this._dialog = null;
      }
      dialog.dispose();
    }
  }

  private _closeDialog(): void {
    if (this._dialog && !this._dialog.isDisposed) {
      this._dialog.reject();
    }
    this._dialog = null;
  }

  private _showUnreachable(): void {
    if (this._notices.has('unreachable')) {
      return;
    }
    this._notices.set(
      'unreachable',
      Notification.warning(
        this._trans.__(
          'The cgu-lab platform cannot be reached: check your network connection. This page keeps trying.'
        ),
        {
          autoClose: false,
          actions: [
            {
              label: this._trans.__('Try now'),
              callback: () => void this.checkNow()
            }
          ]
        }
      )
    );
  }

  private _dismiss(kind: string): void {
    const id = this._notices.get(kind);
    if (id) {
      Notification.dismiss(id);
      this._notices.delete(kind);
    }
  }

  private _setAccess(access: Access | 'revoked'): void {
    if (access !== this._access) {
      this._access = access;
      document.body.dataset.cguAccess = access;
      this._accessChanged.emit(access);
    }
  }

  private _info: IServerInfo | null;
  private _access: Access | 'revoked';
  private _trans: TranslationBundle;
  private _fetch: () => Promise<IServerInfo>;
  private _poll: Poll;
  private _frequency: ReturnType<typeof pollFrequency>;
  private _gate: Pick<ServiceGate, 'hold' | 'end' | 'open'> | null;
  private _soon = 0;
  private _failures = 0;
  private _problem: 'stopped' | 'revoked' | null = null;
  private _dialog: Dialog<unknown> | null = null;
  private _notices = new Map<string, string>();
  private _accessChanged = new Signal<this, Access | 'revoked'>(this);
}

/** The watch once the handshake answered; null when the server extension is missing. */
const watchReady = new PromiseDelegate<PlatformWatch | null>();

/** Resolve the watch (once). */
export function provideWatch(watch: PlatformWatch | null): void {
  watchReady.resolve(watch);
}

/** The watch, when the page has one. */
export function platformWatch(): Promise<PlatformWatch | null> {
  return watchReady.promise;
}

/**
 * Close JupyterLab's own dialogs ("Kernel died unexpectedly", "Cannot open …")
 * raised by requests caught in the seconds before the platform said why: ours
 * says more, and a modal queue would otherwise hide it behind them. A queued
 * dialog is tracked only once shown, so this repeats while more appear.
 */
async function clearOtherDialogs(): Promise<void> {
  for (let round = 0; round < 20 && Dialog.tracker.size > 0; round++) {
    Dialog.flush();
    await new Promise(resolve => setTimeout(resolve, 50));
  }
}
