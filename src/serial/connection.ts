/**
 * One serial device of this page, bridged to its pty in the notebook.
 *
 * The page reads the device and sends its bytes over the websocket, never
 * more than the server's window unacknowledged (the server acknowledges what
 * reached the pty), and stops reading the device meanwhile: back-pressure
 * reaches the device as on a real port. The server's bytes are written to the
 * device in order, each acknowledged once written, together with what the
 * kernel asks of the line in between (new settings: the port is closed and
 * reopened, as Web Serial cannot change them on an open port; DTR/RTS and
 * break: `setSignals`), so an ESP32's reset dance keeps its timing.
 *
 * A websocket that drops (the network, a proxy restart) is re-opened with
 * the port's resume token for as long as the server keeps the port; a page
 * reload does the same from sessionStorage (plugin.ts). Disconnecting, or
 * unplugging the device, says `close`, so the kernel gets an I/O error.
 */
import { Signal } from '@lumino/signaling';
import { Credit } from './credit';
import { modemLines, sameOptions } from './format';
import {
  ConnectionState,
  EndReason,
  IAttached,
  IConnectionOptions,
  ISerialOptions,
  ISerialPortInfo,
  ServerMessage,
  webSerial
} from './webSerial';

export type { ConnectionState, EndReason };

/** Read buffer of the port: larger than Chrome's 255 bytes, for 921600 baud. */
const BUFFER_SIZE = 8192;
const MODEM_POLL_MS = 250;

export class SerialConnection {
  constructor(private readonly _o: IConnectionOptions) {
    this.options = _o.options;
    this._resume = _o.resume ?? null;
  }

  /** State, attachment or counters changed (counters: at most every 250 ms). */
  readonly changed = new Signal<this, void>(this);
  /** The connection ended for good, and why. */
  readonly ended = new Signal<this, EndReason>(this);

  state: ConnectionState = 'connecting';
  attached: IAttached | null = null;
  options: ISerialOptions;
  toDevice = 0;
  fromDevice = 0;

  get info(): ISerialPortInfo {
    return this._o.info;
  }

  /** Open the device and attach it; rejects with the server's reason. */
  async start(): Promise<IAttached> {
    const port = this._o.port;
    if (!port.readable) {
      await port.open({ ...this.options, bufferSize: BUFFER_SIZE });
    }
    this._onUnplug = (event: Event) => {
      if (event.target === port) {
        void this.disconnect('unplugged');
      }
    };
    webSerial()?.addEventListener('disconnect', this._onUnplug);
    this._startIo();
    try {
      return await this._connect();
    } catch (error) {
      await this._end('lost', false);
      throw error;
    }
  }

  /** Close for good: the server unplugs the pty (the kernel reads an I/O error). */
  async disconnect(reason: EndReason = 'disconnected'): Promise<void> {
    if (this.state === 'closed') {
      return;
    }
    if (this._ws?.readyState === WebSocket.OPEN) {
      this._ws.send(JSON.stringify({ type: 'close' }));
    }
    await this._end(reason, true);
  }

  // -- the websocket ---------------------------------------------------------

  private _connect(): Promise<IAttached> {
    return new Promise<IAttached>((resolve, reject) => {
      const ws = new WebSocket(this._o.url);
      ws.binaryType = 'arraybuffer';
      let settled = false;
      ws.onopen = () => {
        ws.send(
          JSON.stringify({
            type: 'hello',
            settings: this.options,
            info: this._o.info,
            port: this._resume?.port,
            resume: this._resume?.resume
          })
        );
      };
      ws.onmessage = event => {
        if (typeof event.data !== 'string') {
          this._fromServer(new Uint8Array(event.data as ArrayBuffer));
          return;
        }
        const message = JSON.parse(event.data) as ServerMessage;
        if (!settled && message.type === 'attached') {
          settled = true;
          resolve(message);
        } else if (!settled && message.type === 'error') {
          settled = true;
          reject(new Error(message.message));
        }
        this._control(message);
      };
      ws.onclose = event => {
        if (!settled) {
          settled = true;
          reject(new Error(`closed (${event.code})`));
        }
        this._closed(ws, event.code);
      };
      this._ws = ws;
    });
  }

  private _control(message: ServerMessage): void {
    switch (message.type) {
      case 'attached':
        this.attached = message;
        this._resume = { port: message.name, resume: message.resume };
        this._retryUntil = 0;
        this.state = 'attached';
        this._credit.reset(message.window); // reading the device goes on
        if (message.resumed && !sameOptions(message.settings, this.options)) {
          this._queue(() => this._reopen(message.settings));
        }
        if (message.resumed) {
          this._signals(message.signals);
        }
        this.changed.emit();
        break;
      case 'ack':
        this._credit.acknowledged(message.bytes);
        break;
      case 'settings':
        this._queue(() => this._reopen(message.settings));
        break;
      case 'signals':
        this._signals(message);
        break;
      case 'closed':
        this._serverReason = message.reason;
        break;
    }
  }

  private _closed(ws: WebSocket, code: number): void {
    if (ws !== this._ws) {
      return;
    }
    this._ws = null;
    if (this.state === 'closed' || this.state === 'connecting') {
      return;
    }
    if (code === 4001 || this._serverReason === 'taken-over') {
      void this._end('taken-over', true);
    } else if (code === 4002 || code === 4400) {
      void this._end('server-closed', true);
    } else {
      this._retry();
    }
  }

  /** Re-open a dropped websocket with the resume token while the server keeps the port. */
  private _retry(): void {
    const now = Date.now();
    if (!this._retryUntil) {
      this._retryUntil = now + this._o.retryMs;
      this._delay = 500;
    }
    if (now > this._retryUntil) {
      void this._end('lost', true);
      return;
    }
    this.state = 'reconnecting';
    this.changed.emit();
    window.setTimeout(() => {
      if (this.state !== 'reconnecting') {
        return;
      }
      this._connect().catch(() => undefined); // onclose retries again
    }, this._delay);
    this._delay = Math.min(this._delay * 2, 5000);
  }

  // -- the device ------------------------------------------------------------

  private _startIo(): void {
    const port = this._o.port;
    this._writer = port.writable?.getWriter() ?? null;
    this._reading = true;
    this._readLoop = this._read();
    this._modemTimer = window.setInterval(
      () => void this._pollModem(),
      MODEM_POLL_MS
    );
    this._countTimer = window.setInterval(() => {
      if (this._counted !== this.toDevice + this.fromDevice) {
        this._counted = this.toDevice + this.fromDevice;
        this.changed.emit();
      }
    }, 250);
  }

  private async _stopIo(): Promise<void> {
    this._reading = false;
    this._credit.wake(); // a read waiting for credit lets go
    await this._reader?.cancel().catch(() => undefined);
    await this._readLoop;
    this._writer?.releaseLock();
    this._writer = null;
  }

  /** The device's bytes to the server, within the window. */
  private async _read(): Promise<void> {
    const port = this._o.port;
    while (this._reading && port.readable) {
      const reader = port.readable.getReader();
      this._reader = reader;
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) {
            break;
          }
          if (value?.length) {
            await this._toServer(value);
          }
        }
      } catch {
        // A framing, parity or overrun error: Web Serial gives a new readable.
      } finally {
        reader.releaseLock();
        this._reader = null;
      }
    }
    if (this._reading && this.state !== 'closed') {
      void this.disconnect('device-lost'); // readable gone: the device went away
    }
  }

  private async _toServer(data: Uint8Array): Promise<void> {
    while (
      this._reading &&
      (!this._credit.available ||
        this._ws?.readyState !== WebSocket.OPEN ||
        this.state !== 'attached')
    ) {
      await this._credit.changed();
    }
    if (this._ws?.readyState !== WebSocket.OPEN) {
      return; // the page is closing: the device's last bytes have nowhere to go
    }
    this._ws.send(data);
    this._credit.spent(data.length);
    this.fromDevice += data.length;
  }

  /** The server's bytes to the device, in order, each acknowledged once written. */
  private _fromServer(data: Uint8Array): void {
    this._queue(async () => {
      if (!this._writer) {
        return;
      }
      await this._writer.write(data);
      this.toDevice += data.length;
      if (this._ws?.readyState === WebSocket.OPEN) {
        this._ws.send(JSON.stringify({ type: 'ack', bytes: data.length }));
      }
    });
  }

  private _queue(step: () => Promise<void>): void {
    this._chain = this._chain.then(step).catch(error => {
      console.warn('cgu-lab serial: the device refused', error);
    });
  }

  /** New settings from the kernel: Web Serial opens a port with them, so reopen. */
  private async _reopen(options: ISerialOptions): Promise<void> {
    if (this.state === 'closed' || sameOptions(options, this.options)) {
      return;
    }
    const port = this._o.port;
    await this._stopIo();
    window.clearInterval(this._modemTimer);
    window.clearInterval(this._countTimer);
    await port.close();
    await port.open({ ...options, bufferSize: BUFFER_SIZE });
    this.options = options;
    this._startIo();
    await this._applySignals();
    this.changed.emit();
  }

  private _signals(lines: {
    dtr: boolean;
    rts: boolean;
    break: boolean;
  }): void {
    this._lastSignals = {
      dataTerminalReady: lines.dtr,
      requestToSend: lines.rts,
      break: lines.break
    };
    this._queue(() => this._applySignals());
  }

  private async _applySignals(): Promise<void> {
    if (this._lastSignals && this.state !== 'closed') {
      await this._o.port.setSignals(this._lastSignals);
    }
  }

  private async _pollModem(): Promise<void> {
    if (this.state !== 'attached' || !this._o.port.readable) {
      return;
    }
    try {
      const lines = modemLines(await this._o.port.getSignals());
      const text = JSON.stringify(lines);
      if (text !== this._modem && this._ws?.readyState === WebSocket.OPEN) {
        this._modem = text;
        this._ws.send(JSON.stringify({ type: 'modem', ...lines }));
      }
    } catch {
      // Some adapters have no modem lines: nothing to tell.
    }
  }

  private async _end(reason: EndReason, announce: boolean): Promise<void> {
    if (this.state === 'closed') {
      return;
    }
    this.state = 'closed';
    this._ws?.close(1000);
    this._ws = null;
    window.clearInterval(this._modemTimer);
    window.clearInterval(this._countTimer);
    if (this._onUnplug) {
      webSerial()?.removeEventListener('disconnect', this._onUnplug);
    }
    this._credit.wake();
    await this._stopIo();
    await this._o.port.close().catch(() => undefined);
    this.changed.emit();
    if (announce) {
      this.ended.emit(reason);
    }
  }

  private _ws: WebSocket | null = null;
  private _resume: { port: string; resume: string } | null;
  private readonly _credit = new Credit();
  private _reading = false;
  private _reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  private _readLoop: Promise<void> = Promise.resolve();
  private _writer: WritableStreamDefaultWriter<Uint8Array> | null = null;
  private _chain: Promise<void> = Promise.resolve();
  private _lastSignals: {
    dataTerminalReady: boolean;
    requestToSend: boolean;
    break: boolean;
  } | null = null;
  private _modem = '';
  private _modemTimer = 0;
  private _countTimer = 0;
  private _counted = 0;
  private _retryUntil = 0;
  private _delay = 500;
  private _serverReason = '';
  private _onUnplug: ((event: Event) => void) | null = null;
}
