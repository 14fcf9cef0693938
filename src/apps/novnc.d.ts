/**
 * The part of noVNC's RFB class (@novnc/novnc, core/rfb.js; it ships no
 * types) that the desktop panel uses.
 */
declare module '@novnc/novnc' {
  export interface IRfbOptions {
    shared?: boolean;
    wsProtocols?: string[];
  }

  export default class RFB extends EventTarget {
    constructor(target: HTMLElement, url: string, options?: IRfbOptions);
    viewOnly: boolean;
    scaleViewport: boolean;
    resizeSession: boolean;
    focusOnClick: boolean;
    background: string;
    disconnect(): void;
    focus(): void;
    clipboardPasteFrom(text: string): void;
  }
}
