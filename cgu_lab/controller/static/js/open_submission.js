// @ts-check
// "Open as notebook" on a submission (the assignment page and the submission page): the
// controller answers the TA's one copy of it on every click (made and started the first
// time, started again when stopped), and the page goes to that copy's start page, which
// follows the start's progress stream. A refusal (the TA's quota) is said here and leaves
// nothing behind.
import { api, showStatus } from './common.js';

/**
 * @param {number | string} id the submission's id
 * @param {string} label what the TA clicked on, for the messages ("alice's submission #1")
 * @param {HTMLButtonElement | null} [button] disabled while the request is under way
 */
export async function openSubmission(id, label, button) {
  if (button) button.disabled = true;
  showStatus(`Opening your copy of ${label}…`);
  try {
    const nb = await api('POST', `/api/submissions/${id}/open`);
    showStatus(`Starting ${nb.name}; its progress follows.`);
    window.location.assign(
      `/notebook/auto-start/${encodeURIComponent(nb.owner)}/${encodeURIComponent(nb.name)}?next=${encodeURIComponent(nb.url)}`
    );
  } catch (error) {
    showStatus(`${label} was not opened: ${error.message}`, 'error');
    if (button) button.disabled = false;
  }
}
