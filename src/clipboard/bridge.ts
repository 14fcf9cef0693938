/**
 * This tab, lending its clipboard to the notebook's kernels: the websocket to
 * the server extension, which relays what `xclip`, `xsel`, pandas or
 * pyperclip ask in a kernel or terminal (cgu_lab/notebook/clipboard/).
 *
 * The server sends a request to the tab that had the focus last (the person
 * who just ran the cell is looking at it, and browsers lend the clipboard
 * only to the tab in front), so the tab reports when it gets or loses the
 * focus, and when its user clicks or types in it. The channel comes back by
 * itself after a network cut or a server restart.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { BrowserClipboard, IReadPolicy } from './access';
import { decodedSize } from './browser';
import {
  ClipboardAnswer,
  failure,
  IClipboardRequest,
  ServerMessage
} from './protocol';

const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30_000;
/** Clicks and keys say "I am here" at most this often. */
const ACTIVITY_MS = 2000;

export interface IBridgeOptions {
  /** The channel's websocket address. */
  url: () => string;
  clipboard: BrowserClipboard;
  /** The read policy now (the settings may change while the tab is open). */
  policy: () => IReadPolicy;
  trans: TranslationBundle;
}

export class ClipboardBridge {
  constructor(private readonly _o: IBridgeOptions) {}

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** Whether the server said `ready` on the current channel. */
  get ready(): boolean {
    return this._maxBytes > 0;
  }

  start(): void {
    if (this._running || this._disposed) {
      return;
    }
    this._running = true;
    for (const [target, event] of this._focusEvents) {
      target.addEventListener(event, this._onFocusChange);
    }
    for (const event of ['pointerdown', 'keydown']) {
      window.addEventListener(event, this._onActivity, {
        capture: true,
        passive: true
      });
    }
    this._connect();
  }

  stop(): void {
    this._running = false;
    clearTimeout(this._retry);
    for (const [target, event] of this._focusEvents) {
      target.removeEventListener(event, this._onFocusChange);
    }
    for (const event of ['pointerdown', 'keydown']) {
      window.removeEventListener(event, this._onActivity, { capture: true });
    }
    for (const controller of this._pending.values()) {
      controller.abort();
    }
    this._pending.clear();
    this._ws?.close();
    this._ws = null;
    this._mark(false);
  }

  dispose(): void {
    this.stop();
    this._disposed = true;
  }

  private _connect(): void {
    const ws = new WebSocket(this._o.url());
    this._ws = ws;
    ws.onopen = () => this._sendFocus();
    ws.onmessage = event => {
      if (typeof event.data === 'string') {
        this._message(ws, JSON.parse(event.data) as ServerMessage);
      }
    };
    ws.onclose = () => {
      if (this._ws !== ws) {
        return;
      }
      this._ws = null;
      this._maxBytes = 0;
      this._mark(false);
      if (this._running) {
        this._retry = window.setTimeout(() => this._connect(), this._delay);
        this._delay = Math.min(this._delay * 2, RETRY_MAX_MS);
      }
    };
  }

  private _message(ws: WebSocket, message: ServerMessage): void {
    switch (message.type) {
      case 'ready':
        this._maxBytes = message.max_bytes;
        this._delay = RETRY_FIRST_MS;
        this._mark(true);
        break;
      case 'request':
        void this._handle(ws, message);
        break;
      case 'cancel':
        this._pending.get(message.id)?.abort();
        break;
      case 'error':
        console.warn('cgu-lab clipboard:', message.message);
        break;
    }
  }

  private async _handle(
    ws: WebSocket,
    request: IClipboardRequest
  ): Promise<void> {
    const controller = new AbortController();
    this._pending.set(request.id, controller);
    const deadline = { ms: request.deadline_ms, signal: controller.signal };
    const clipboard = this._o.clipboard;
    let answer: ClipboardAnswer;
    try {
      answer =
        request.op === 'write'
          ? await clipboard.write(request, deadline)
          : await clipboard.read(request, this._o.policy(), deadline);
    } catch (error) {
      answer = failure('refused', (error as Error).message || String(error));
    } finally {
      this._pending.delete(request.id);
    }
    if (answer.ok && this._tooLarge(answer)) {
      answer = failure(
        'too_large',
        this._o.trans.__(
          'the clipboard content is larger than the bridge carries (at most %1 bytes)',
          this._maxBytes
        )
      );
    }
    if (!controller.signal.aborted && ws.readyState === WebSocket.OPEN) {
      ws.send(JSON.stringify({ type: 'answer', id: request.id, ...answer }));
    }
  }

  private _tooLarge(answer: ClipboardAnswer): boolean {
    if (!answer.ok) {
      return false;
    }
    const size =
      answer.text !== undefined
        ? new Blob([answer.text]).size
        : decodedSize(answer.base64 ?? '');
    return size > this._maxBytes;
  }

  private _sendFocus(): void {
    if (this._ws?.readyState === WebSocket.OPEN) {
      const focused =
        document.hasFocus() && document.visibilityState === 'visible';
      this._ws.send(JSON.stringify({ type: 'focus', focused }));
      this._lastActivity = Date.now();
    }
  }

  private readonly _onFocusChange = () => this._sendFocus();

  private readonly _onActivity = () => {
    if (Date.now() - this._lastActivity > ACTIVITY_MS) {
      this._sendFocus();
    }
  };

  /** `data-cgu-clipboard` on the body: whether this tab lends its clipboard now. */
  private _mark(ready: boolean): void {
    if (ready) {
      document.body.dataset.cguClipboard = 'ready';
    } else {
      delete document.body.dataset.cguClipboard;
    }
  }

  private readonly _focusEvents: Array<[EventTarget, string]> = [
    [window, 'focus'],
    [window, 'blur'],
    [document, 'visibilitychange']
  ];
  private _ws: WebSocket | null = null;
  private _running = false;
  private _disposed = false;
  private _maxBytes = 0;
  private _delay = RETRY_FIRST_MS;
  private _retry = 0;
  private _lastActivity = 0;
  private readonly _pending = new Map<number, AbortController>();
}
