// @ts-check
import { api, el, showStatus } from './common.js';

/** @typedef {import('./common.js').ProgressEvent} ProgressEvent */

const box = /** @type {HTMLElement} */ (document.getElementById('auto-start'));
const { owner, name, next } = box.dataset;
const base = `/api/notebooks/${encodeURIComponent(owner)}/${encodeURIComponent(name)}`;
const button = /** @type {HTMLButtonElement} */ (document.getElementById('start-button'));
const progressBox = /** @type {HTMLElement} */ (document.getElementById('progress-box'));
const bar = /** @type {HTMLProgressElement} */ (document.getElementById('progress'));
const log = /** @type {HTMLElement} */ (document.getElementById('progress-log'));
const stateText = /** @type {HTMLElement} */ (document.getElementById('auto-start-state'));
// "Restart" in JupyterLab asks for a start at once; a notebook still stopping (the
// culler's or the liveness watch's stop) is started as soon as that stop has ended.
let startWhenStopped = new URLSearchParams(window.location.search).get('start') === '1';

/** @param {string} url */
function land(url) {
  window.location.assign(next && next.startsWith('/notebook/') ? next : url);
}

function follow() {
  progressBox.hidden = false;
  button.hidden = true;
  const source = new EventSource(`${base}/events`);
  source.onmessage = message => {
    /** @type {ProgressEvent} */
    const event = JSON.parse(message.data);
    bar.value = event.percent;
    bar.textContent = `${event.percent}%`;
    if (event.operation !== 'status') {
      log.append(el('li', {}, event.message));
    }
    stateText.replaceChildren('This notebook is ', el('strong', {}, event.state), '.');
    if (!event.done) return;
    source.close();
    if (event.state === 'running' && event.url) {
      land(event.url);
    } else if (event.state === 'stopped') {
      if (event.ok === false) showStatus(event.message, 'error');
      button.hidden = false;
      progressBox.hidden = event.operation === 'status';
      if (startWhenStopped) {
        startWhenStopped = false;
        if (event.message) {
          stateText.after(el('p', { class: 'message warn', role: 'alert' }, `Last time: ${event.message}`));
        }
        button.click();
      }
    }
  };
  source.onerror = () => {
    source.close();
    setTimeout(follow, 2000);
  };
}

button.addEventListener('click', async () => {
  button.disabled = true;
  log.replaceChildren();
  try {
    await api('POST', `${base}/start`);
    follow();
  } catch (error) {
    showStatus(error.message, 'error');
  } finally {
    button.disabled = false;
  }
});

if (button.hidden) {
  follow();
} else if (startWhenStopped) {
  startWhenStopped = false;
  button.click(); // "Restart" was pressed in JupyterLab: no second question
} else {
  button.focus();
}
