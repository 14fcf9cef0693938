/**
 * The laptop's clipboard for the desktop, through noVNC's RFB clipboard API
 * instead of noVNC's side-panel textarea:
 *
 * - desktop -> laptop: the VNC server announces the desktop's clipboard (and
 *   its selection) with a `clipboard` event; it goes to navigator.clipboard;
 * - laptop -> desktop: when the pointer or the focus comes into the desktop,
 *   what the laptop's clipboard holds now (if it changed) is handed to the
 *   VNC server with `clipboardPasteFrom`, so a paste in the desktop finds it.
 *
 * Text only (what RFB carries). Browsers lend the clipboard only to a focused
 * page and may ask the user once; a refusal leaves the desktop working
 * without it. Read-only viewers get neither direction: the server drops their
 * clipboard messages anyway (cgu_lab/notebook/apps/rfb.py).
 */
import type RFB from '@novnc/novnc';

export class DesktopClipboard {
  constructor(
    private readonly rfb: RFB,
    private readonly node: HTMLElement
  ) {
    rfb.addEventListener('clipboard', this.onRemote);
    node.addEventListener('pointerenter', this.onEnter);
    node.addEventListener('focusin', this.onEnter);
  }

  dispose(): void {
    this.rfb.removeEventListener('clipboard', this.onRemote);
    this.node.removeEventListener('pointerenter', this.onEnter);
    this.node.removeEventListener('focusin', this.onEnter);
  }

  /** The text last exchanged, either way: not sent back where it came from. */
  private last = '';

  private readonly onRemote = (event: Event): void => {
    const text = (event as CustomEvent<{ text: string }>).detail?.text ?? '';
    if (!text || text === this.last) {
      return;
    }
    this.last = text;
    void navigator.clipboard?.writeText(text).catch(() => undefined);
  };

  private readonly onEnter = (): void => {
    void this.pushLaptopText();
  };

  private async pushLaptopText(): Promise<void> {
    let text = '';
    try {
      text = (await navigator.clipboard?.readText()) ?? '';
    } catch {
      return; // not lent (no permission, page not focused): the desktop works on
    }
    if (text && text !== this.last) {
      this.last = text;
      this.rfb.clipboardPasteFrom(text);
    }
  }
}
