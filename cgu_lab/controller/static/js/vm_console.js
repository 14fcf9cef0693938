// @ts-check
/**
 * The console page of a VM notebook: noVNC (vendored from @novnc/novnc) on the console
 * server's websocket, which the platform's proxy forwards on the notebook's own origin.
 * A read-only share gets noVNC's viewOnly here; the console server also drops such a
 * viewer's key, pointer and clipboard messages, so the page is not what enforces it.
 */

/**
 * The part of noVNC's RFB class this page uses.
 * @typedef {EventTarget & {
 *   viewOnly: boolean, scaleViewport: boolean, focusOnClick: boolean,
 *   sendCtrlAltDel(): void, focus(): void, disconnect(): void
 * }} Rfb
 */

const body = document.body;
const base = body.dataset.base ?? '/';
const viewOnly = body.dataset.viewOnly === 'true';
const state = /** @type {HTMLElement} */ (document.getElementById('vm-state'));
const display = /** @type {HTMLElement} */ (document.getElementById('vm-screen'));
const cad = /** @type {HTMLButtonElement} */ (document.getElementById('vm-cad'));

/** @param {string} text @param {boolean} [bad] */
function show(text, bad = false) {
  state.textContent = text;
  state.classList.toggle('warn', bad);
}

async function main() {
  /** @type {HTMLElement} */ (document.getElementById('vm-accel')).hidden = body.dataset.accel !== 'tcg';
  /** @type {HTMLElement} */ (document.getElementById('vm-view-only')).hidden = !viewOnly;
  // A URL, not a module name: the type checker does not follow it into noVNC's sources.
  const module = `${base}static/vendor/novnc/core/rfb.js`;
  const { default: RFB } = await import(module);
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  connect(RFB, `${scheme}://${location.host}${base}websockify`);
}

/**
 * @param {new (target: HTMLElement, url: string, options: object) => Rfb} RFB
 * @param {string} url
 */
function connect(RFB, url) {
  show('Connecting…');
  const rfb = new RFB(display, url, { shared: true, wsProtocols: ['binary'] });
  rfb.viewOnly = viewOnly;
  rfb.scaleViewport = true;
  rfb.focusOnClick = !viewOnly;
  rfb.addEventListener('connect', () => {
    show(viewOnly ? 'Watching' : 'Connected');
    cad.hidden = viewOnly;
    if (!viewOnly) {
      rfb.focus();
    }
  });
  rfb.addEventListener('disconnect', event => {
    cad.hidden = true;
    const clean = /** @type {CustomEvent<{clean: boolean}>} */ (event).detail?.clean;
    show(clean ? 'Disconnected: the VM stopped or the connection closed' : 'Connection lost; retrying…', true);
    setTimeout(() => connect(RFB, url), clean ? 5000 : 2000);
  });
  cad.onclick = () => rfb.sendCtrlAltDel();
}

main().catch(error => show(`The console could not start: ${error}`, true));
