/**
 * The page's serial device: at most one connection at a time, what the tab
 * remembers of it across a reload, and the sentences for how it ended.
 *
 * One device per page keeps the dialog and the status bar simple; the server
 * can bridge several (another tab gets `ttyWEB1`).
 */
import { Notification } from '@jupyterlab/apputils';
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Signal } from '@lumino/signaling';
import { EndReason, SerialConnection } from './connection';
import { portLabel, recall, remember, sameDevice } from './format';
import { ISerialOptions, ISerialPort, webSerial } from './webSerial';

/** How long a dropped channel is retried; the server keeps a port 60 s by default. */
const RETRY_MS = 55_000;

export class SerialManager {
  constructor(
    private readonly trans: TranslationBundle,
    private readonly settings: ServerConnection.ISettings = ServerConnection.makeSettings()
  ) {}

  /** A connection came, changed or went. */
  readonly changed = new Signal<this, void>(this);

  get connection(): SerialConnection | null {
    return this._connection;
  }

  /** Open `port` with `options` and attach it to a pty of this notebook. */
  async connect(
    port: ISerialPort,
    options: ISerialOptions,
    resume: { port: string; resume: string } | null = null
  ): Promise<void> {
    await this.disconnect();
    const connection = new SerialConnection({
      port,
      info: port.getInfo(),
      options,
      url: this.channelUrl(),
      retryMs: RETRY_MS,
      resume
    });
    this._connection = connection;
    connection.changed.connect(this._changed, this);
    connection.ended.connect((_, reason) => this._ended(connection, reason));
    this.changed.emit();
    try {
      await connection.start();
    } catch (error) {
      this._drop(connection);
      throw error;
    }
  }

  async disconnect(): Promise<void> {
    const connection = this._connection;
    if (connection) {
      this._drop(connection);
      await connection.disconnect();
    }
  }

  /**
   * After a reload: open the device this tab had (a port the browser already
   * granted needs no chooser) and re-attach to the same pty.
   */
  async reattach(): Promise<void> {
    const base = this.settings.baseUrl;
    const remembered = recall(base);
    const serial = webSerial();
    if (!remembered || !serial || this._connection) {
      return;
    }
    const ports = await serial.getPorts().catch(() => []);
    const port = ports.find(p => sameDevice(p.getInfo(), remembered.info));
    if (!port) {
      remember(base, null);
      Notification.warning(
        this.trans.__(
          '%1 is no longer there: plug it in and choose it again with Serial.',
          portLabel(remembered.info, this.trans)
        ),
        { autoClose: 8000 }
      );
      return;
    }
    try {
      await this.connect(port, remembered.options, {
        port: remembered.port,
        resume: remembered.resume
      });
    } catch (error) {
      Notification.warning(
        this.trans.__(
          'The serial device could not be attached again: %1',
          (error as Error).message
        ),
        { autoClose: 8000 }
      );
    }
  }

  /** The channel's websocket address, through the same base URL as the page. */
  channelUrl(): string {
    let url = URLExt.join(this.settings.wsUrl, 'cgu-lab/serial/channel');
    if (this.settings.appendToken && this.settings.token) {
      url += `?token=${encodeURIComponent(this.settings.token)}`;
    }
    return url;
  }

  private _changed(connection: SerialConnection): void {
    if (connection === this._connection && connection.attached) {
      remember(this.settings.baseUrl, {
        port: connection.attached.name,
        resume: connection.attached.resume,
        info: connection.info,
        options: connection.options
      });
    }
    this.changed.emit();
  }

  private _drop(connection: SerialConnection): void {
    if (this._connection === connection) {
      this._connection = null;
      remember(this.settings.baseUrl, null);
      this.changed.emit();
    }
  }

  private _ended(connection: SerialConnection, reason: EndReason): void {
    const wasCurrent = this._connection === connection;
    this._drop(connection);
    if (!wasCurrent || reason === 'disconnected') {
      return;
    }
    const name = connection.attached?.name ?? '';
    const sentences: Record<EndReason, string> = {
      disconnected: '',
      unplugged: this.trans.__(
        'The serial device was unplugged; %1 is closed in the notebook.',
        name
      ),
      'device-lost': this.trans.__(
        'The serial device stopped answering; %1 is closed in the notebook.',
        name
      ),
      'taken-over': this.trans.__(
        '%1 was attached from another tab; this one let it go.',
        name
      ),
      'server-closed': this.trans.__(
        'The notebook closed %1 (it was stopped or the device was disconnected elsewhere).',
        name
      ),
      lost: this.trans.__(
        'The connection to the notebook was lost for too long; %1 is closed.',
        name
      )
    };
    Notification.warning(sentences[reason], { autoClose: 10000 });
  }

  private _connection: SerialConnection | null = null;
}
