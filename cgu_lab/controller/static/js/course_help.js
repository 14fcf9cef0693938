// @ts-check
// The course page's Help tab: the course's raised hands, live, with Take (shares the
// student's notebook with me and opens it in a new tab) and Done (ends it and the
// share), and the course's figures: queue length, median wait, median help time.
// Asked every few seconds while the tab and the page show, less often after failures
// (poll.js).
import { api, el, fact, replaceRows, showError, showStatus } from './common.js';
import { poll } from './poll.js';

const EVERY_MS = 5_000;
const AT_MOST_MS = 60_000;
/** @type {import('./course_util.js').CourseContext} */
let ctx;
/** @type {import('./poll.js').Poller} */
let rounds;
// Whether the last round failed: its message is the one a success clears (a refused Take
// or Done says why until the person acts again, though the queue is asked meanwhile).
let failed = false;

/** Load the queue now (a button was pressed), then go on every EVERY_MS while the tab shows. */
const refresh = () => rounds.now();

/**
 * A duration as people read it: "45 s", "3 min", "1 h 05 min", "—".
 * @param {number | null | undefined} seconds
 */
export function duration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '—';
  const s = Math.max(0, Math.round(seconds));
  if (s < 90) return `${s} s`;
  const minutes = Math.round(s / 60);
  if (minutes < 60) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

/** @param {string | null} iso */
function since(iso) {
  return iso ? (Date.now() - new Date(iso).getTime()) / 1000 : null;
}

/** @param {string} id @param {string} action */
function actionPath(id, action) {
  return `${ctx.base}/help/${encodeURIComponent(id)}/${action}`;
}

async function take(request) {
  showError('help-error', null);
  // Opened in the click itself, so that no pop-up blocker stops it.
  const tab = window.open('', '_blank');
  try {
    const taken = await api('POST', actionPath(request.id, 'take'));
    if (tab) {
      tab.opener = null;
      tab.location.href = taken.url;
    } else {
      window.open(taken.url, '_blank', 'noopener');
    }
    showStatus(`You are helping ${taken.student.display_name}; their notebook opened in a new tab.`);
  } catch (error) {
    tab?.close();
    showError('help-error', error);
  }
  void refresh();
}

async function done(request) {
  showError('help-error', null);
  try {
    await api('POST', actionPath(request.id, 'end'));
    showStatus(`Help for ${request.student.display_name} ended; the share is revoked.`);
  } catch (error) {
    showError('help-error', error);
  }
  void refresh();
}

function stateCell(request) {
  if (request.state === 'helping') {
    return el(
      'td',
      {},
      el('span', { class: 'state state-running' }, `helped by ${request.helper_display_name || request.helper}`),
      el('div', { class: 'hint' }, `for ${duration(since(request.taken_at))}`)
    );
  }
  return el(
    'td',
    {},
    el('span', { class: 'state state-pending' }, 'waiting'),
    el('div', { class: 'hint' }, duration(since(request.created_at)))
  );
}

function actions(request) {
  const buttons = [];
  if (request.state === 'waiting') {
    buttons.push(el('button', { type: 'button', dataset: { help: 'take' }, onclick: () => take(request) }, 'Take'));
  } else {
    if (request.helper === ctx.me) {
      buttons.push(el('a', { class: 'button', href: request.url, target: '_blank', rel: 'noopener' }, 'Open'));
    }
    buttons.push(el('button', { type: 'button', dataset: { help: 'done' }, onclick: () => done(request) }, 'Done'));
  }
  return el('td', { class: 'actions' }, buttons);
}

function row(request) {
  return el(
    'tr',
    { dataset: { helpRequest: String(request.id), student: request.student.name, state: request.state } },
    el('td', {}, request.position ?? ''),
    el('th', { scope: 'row' }, request.student.display_name, el('div', { class: 'hint' }, request.student.name)),
    el('td', {}, request.question || el('span', { class: 'hint' }, 'no question')),
    el('td', {}, request.notebook, el('div', { class: 'hint' }, request.access === 'read' ? 'read-only' : 'editable')),
    stateCell(request),
    actions(request)
  );
}

function figures(f) {
  const dl = document.getElementById('help-figures');
  dl.replaceChildren();
  if (!f) return;
  fact(dl, 'Waiting', String(f.waiting));
  fact(dl, 'Being helped', String(f.being_helped));
  fact(dl, 'Median wait', duration(f.median_wait_seconds));
  fact(dl, 'Median help time', duration(f.median_help_seconds));
  fact(dl, 'Helped', String(f.helped));
}

async function load() {
  const queue = await api('GET', `${ctx.base}/help`);
  figures(queue.figures);
  replaceRows(document.getElementById('help-requests'), queue.requests.map(row), 'Nobody is waiting for help.', 6);
}

/** @param {import('./course_util.js').CourseContext} context */
export function init(context) {
  ctx = context;
  rounds = poll(
    async () => {
      await load();
      if (failed) showError('help-error', null);
      failed = false;
    },
    {
      everyMs: EVERY_MS,
      maxMs: AT_MOST_MS,
      onError: error => {
        failed = true;
        showError('help-error', error);
      }
    }
  );
  // Hidden until the Help tab is chosen (visible() below).
  rounds.pause(true);
  document.getElementById('help-refresh').addEventListener('click', () => void refresh());
  return {
    /** @param {boolean} visible whether the Help tab is on screen (showing it asks at once) */
    visible(visible) {
      rounds.pause(!visible);
    }
  };
}
