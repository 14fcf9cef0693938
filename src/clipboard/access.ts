/**
 * This tab's clipboard, as a kernel's request meets it: `navigator.clipboard`
 * with the browser's rules about it.
 *
 * Browsers guard the clipboard: reading needs the user's permission (Chrome
 * asks once per site) and, like writing, a tab that has the focus; Firefox
 * and Safari let a page read or write only during a click. So a request that
 * cannot go through at once is not simply refused: the tab explains, once,
 * why the browser is about to ask; waits for the focus to come back; or
 * offers a button whose click lets the browser say yes. Only a real refusal
 * (permission denied, "Deny" clicked, nothing in time) answers the kernel
 * with an error, and always with a sentence it prints.
 */
import { Notification } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { formatBytes } from '../format';
import {
  decodedSize,
  focused,
  IDeadline,
  isNotAllowed,
  permissionState,
  SLACK_MS
} from './browser';
import {
  ClipboardAnswer,
  failure,
  fromBase64,
  IClipboardRequest,
  toBase64
} from './protocol';

/** localStorage: the tab already explained why the browser asks. */
const EXPLAINED_KEY = 'cgu-lab:clipboard-explained';
/** How long the note about a read stays. */
const ANNOUNCE_MS = 4000;

/** What the user chose about kernels reading this tab's clipboard. */
export interface IReadPolicy {
  /** A click on "Allow" before each read. */
  confirm: boolean;
  /** A short note after each read. */
  announce: boolean;
}

export class BrowserClipboard {
  constructor(private readonly trans: TranslationBundle) {}

  /** The note about the latest reads, while it may still be on screen. */
  private _announced: { id: string; count: number; at: number } | null = null;

  /** Read the clipboard for a kernel (`op` read: one type; `types`: what is there). */
  async read(
    request: IClipboardRequest,
    policy: IReadPolicy,
    deadline: IDeadline
  ): Promise<ClipboardAnswer> {
    const trans = this.trans;
    if (!navigator.clipboard) {
      return this._unsupported();
    }
    const state = await permissionState('clipboard-read');
    if (state === 'denied') {
      return this._refused();
    }
    if (state !== 'granted') {
      this._explainOnce();
    }
    const readNow = () => this._readNow(request);
    let answer: ClipboardAnswer | null;
    if (policy.confirm) {
      answer = await this._withClick(
        trans.__(
          'A program in this notebook wants to read your clipboard (%1).',
          request.op === 'types' ? trans.__('what it holds') : request.mime
        ),
        trans.__('Allow'),
        deadline,
        readNow
      );
      if (answer === null) {
        return failure('refused', trans.__('you did not allow it in the tab'));
      }
    } else {
      answer = await this._whenFocused(deadline, readNow);
    }
    if (answer.ok && request.op === 'read' && policy.announce) {
      this._announce(answer);
    }
    return answer;
  }

  /** One note for reads in a row (a loop reading the clipboard makes no pile of them). */
  private _announce(answer: { text?: string; base64?: string }): void {
    const size =
      answer.text !== undefined
        ? new Blob([answer.text]).size
        : decodedSize(answer.base64 ?? '');
    const now = Date.now();
    const last =
      this._announced && now - this._announced.at < ANNOUNCE_MS - 500
        ? this._announced
        : null;
    if (this._announced && !last) {
      Notification.dismiss(this._announced.id); // the center keeps no pile of them
    }
    const count = last ? last.count + 1 : 1;
    const message =
      count === 1
        ? this.trans.__(
            'A program in this notebook read your clipboard (%1).',
            formatBytes(size)
          )
        : this.trans.__(
            'A program in this notebook read your clipboard (%1 times, the last %2).',
            count,
            formatBytes(size)
          );
    if (
      last &&
      Notification.update({ id: last.id, message, autoClose: ANNOUNCE_MS })
    ) {
      this._announced = { id: last.id, count, at: now };
      return;
    }
    const id = Notification.info(message, { autoClose: ANNOUNCE_MS });
    this._announced = { id, count: 1, at: now };
  }

  /** Write the clipboard for a kernel; kept for a click where the browser wants one. */
  async write(
    request: IClipboardRequest,
    deadline: IDeadline
  ): Promise<ClipboardAnswer> {
    if (!navigator.clipboard) {
      return this._unsupported();
    }
    const writeNow = () => this._writeNow(request);
    await focused({
      ms: Math.min(deadline.ms, 10_000),
      signal: deadline.signal
    });
    try {
      await writeNow();
      return { ok: true };
    } catch (error) {
      if ((await permissionState('clipboard-write')) === 'denied') {
        return this._refused();
      }
      if (!isNotAllowed(error)) {
        return failure('refused', (error as Error).message);
      }
    }
    // Firefox and Safari write only on a click: keep it until the user gives one.
    Notification.info(
      this.trans.__(
        'A program in this notebook copied %1 for your clipboard: click Copy to put it there.',
        this._size(request)
      ),
      {
        autoClose: false,
        actions: [
          {
            label: this.trans.__('Copy'),
            displayType: 'accent',
            callback: () => void writeNow().catch(() => this._refused())
          }
        ]
      }
    );
    return { ok: true, deferred: true };
  }

  /**
   * A read at once where the browser allows it; else after the focus comes
   * back; else on a click of "Paste" (Firefox, Safari).
   */
  private async _whenFocused(
    deadline: IDeadline,
    readNow: () => Promise<ClipboardAnswer>
  ): Promise<ClipboardAnswer> {
    const trans = this.trans;
    if (!document.hasFocus()) {
      const id = Notification.warning(
        trans.__(
          'A program in this notebook is waiting to read your clipboard: click into this tab.'
        ),
        { autoClose: false }
      );
      const back = await focused(deadline);
      Notification.dismiss(id);
      if (!back) {
        return failure(
          'timeout',
          trans.__(
            "the notebook's tab did not get the focus in time (a browser lends its clipboard only to the tab in front)"
          )
        );
      }
    }
    try {
      return await readNow();
    } catch (error) {
      if (!isNotAllowed(error)) {
        return failure('refused', (error as Error).message);
      }
    }
    if ((await permissionState('clipboard-read')) === 'denied') {
      return this._refused();
    }
    const clicked = await this._withClick(
      trans.__(
        'A program in this notebook wants to read your clipboard; your browser lets it only on a click.'
      ),
      trans.__('Paste'),
      deadline,
      readNow
    );
    return clicked ?? failure('refused', trans.__('nobody clicked "Paste"'));
  }

  /** A notification with a button; the action runs inside the click (a user gesture). */
  private _withClick(
    message: string,
    label: string,
    deadline: IDeadline,
    action: () => Promise<ClipboardAnswer>
  ): Promise<ClipboardAnswer | null> {
    return new Promise(resolve => {
      let settled = false;
      const settle = (answer: ClipboardAnswer | null) => {
        if (!settled) {
          settled = true;
          clearTimeout(timer);
          Notification.dismiss(id);
          resolve(answer);
        }
      };
      const id = Notification.warning(message, {
        autoClose: false,
        actions: [
          {
            label,
            displayType: 'accent',
            callback: () => {
              action().then(settle, (error: unknown) =>
                settle(isNotAllowed(error) ? this._refused() : null)
              );
            }
          },
          {
            label: this.trans.__('Deny'),
            callback: () => settle(null)
          }
        ]
      });
      const timer = setTimeout(() => settle(null), deadline.ms - SLACK_MS);
      deadline.signal.addEventListener('abort', () => settle(null));
    });
  }

  private async _readNow(request: IClipboardRequest): Promise<ClipboardAnswer> {
    const clipboard = navigator.clipboard;
    if (request.op === 'read' && request.mime === 'text/plain') {
      return { ok: true, text: await clipboard.readText() };
    }
    if (!clipboard.read) {
      return this._unsupported();
    }
    const items = await clipboard.read();
    const types: string[] = [];
    for (const item of items) {
      types.push(...item.types.filter(t => !types.includes(t)));
    }
    if (request.op === 'types') {
      return { ok: true, types };
    }
    const item = items.find(i => i.types.includes(request.mime));
    if (!item) {
      return failure(
        'not_available',
        this.trans.__(
          'your clipboard holds no %1 (it holds: %2)',
          request.mime,
          types.join(', ') || this.trans.__('nothing')
        )
      );
    }
    const blob = await item.getType(request.mime);
    if (request.mime.startsWith('text/')) {
      return { ok: true, text: await blob.text() };
    }
    return {
      ok: true,
      base64: toBase64(new Uint8Array(await blob.arrayBuffer()))
    };
  }

  private async _writeNow(request: IClipboardRequest): Promise<void> {
    const clipboard = navigator.clipboard;
    if (request.mime === 'text/plain') {
      await clipboard.writeText(request.text ?? '');
      return;
    }
    const data =
      request.text !== undefined
        ? new Blob([request.text], { type: request.mime })
        : new Blob([fromBase64(request.base64 ?? '') as BlobPart], {
            type: request.mime
          });
    await clipboard.write([new ClipboardItem({ [request.mime]: data })]);
  }

  private _size(request: IClipboardRequest): string {
    if (request.text !== undefined) {
      return this.trans.__('%1 characters', request.text.length);
    }
    return formatBytes(decodedSize(request.base64 ?? ''));
  }

  /** Once per browser: why the browser is about to ask about the clipboard. */
  private _explainOnce(): void {
    try {
      if (localStorage.getItem(EXPLAINED_KEY)) {
        return;
      }
      localStorage.setItem(EXPLAINED_KEY, new Date().toISOString());
    } catch {
      // storage refused: explain every time rather than never
    }
    Notification.info(
      this.trans.__(
        'A program in this notebook (xclip, pandas.read_clipboard, pyperclip…) wants to read your clipboard. Your browser asks you once whether this page may: choose Allow to paste what you copy on this computer into the notebook.'
      ),
      { autoClose: 15_000 }
    );
  }

  private _refused(): ClipboardAnswer {
    Notification.error(
      this.trans.__(
        'Your browser refused this page access to the clipboard, so programs in the notebook cannot use it. Allow "Clipboard" in the site settings (the icon left of the address) and try again.'
      ),
      { autoClose: 15_000 }
    );
    return failure(
      'refused',
      this.trans.__(
        "the browser refused access to its clipboard: allow 'Clipboard' in the site settings of the notebook's page (the icon left of the address), then try again"
      )
    );
  }

  private _unsupported(): ClipboardAnswer {
    return failure(
      'unsupported',
      this.trans.__(
        'this browser gives the page no clipboard (it must be a recent Chrome, Edge, Firefox or Safari, on an HTTPS page)'
      )
    );
  }
}
