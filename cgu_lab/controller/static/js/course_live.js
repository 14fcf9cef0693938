// @ts-check
// The course page's Live tab: live views shown to the course, and the
// students' notebooks running now, each with "Open read-only" (where its owner
// shared it) and "End" (stops it; the controller records who did). While the tab
// shows, it reloads when one of those notebooks changes state (a Server-Sent
// Events stream); the slow timer is for what no event announces: live views that
// begin (from another page) or expire, the students' last activity, and how many
// follow each live view (VIEWERS_MS while a live view runs: a teacher glances at it;
// poll.js asks).
import { api, el, replaceRows, showError, showStatus, formatDate, formatCpu, formatMemory } from './common.js';
import { liveReload } from './live.js';
import { poll } from './poll.js';

const FALLBACK_MS = 60_000;
const VIEWERS_MS = 10_000;
// Whether a live view runs (its viewer count then moves without any event) and the tab shows.
let viewsRunning = false;
let tabShown = false;
/** @type {import('./course_util.js').CourseContext} */
let ctx;
/** @type {import('./poll.js').Poller} */
let rounds;

/**
 * Load the tab now (an event, a button, the teacher's own act); rounds go on every
 * VIEWERS_MS while a live view runs. A hidden tab loads nothing: showing it opens the
 * event stream, whose opening loads it.
 */
const reload = () => rounds.now();

function resources(nb) {
  return `${formatCpu(nb.cpu_milli)} · ${formatMemory(nb.memory)}${nb.gpus ? ` · ${nb.gpus}× ${nb.gpu_type}` : ''}`;
}

async function end(nb) {
  if (!confirm(`End ${nb.owner}'s notebook ${nb.notebook}? Its kernels stop; the files stay.`)) return;
  showError('live-error', null);
  try {
    const result = await api(
      'POST',
      `${ctx.base}/live/${encodeURIComponent(nb.owner)}/${encodeURIComponent(nb.notebook)}/end`
    );
    showStatus(`${result.message}.`);
  } catch (error) {
    showError('live-error', error);
  }
  void reload();
}

// How many follow the notebook live (its collaboration rooms, counted by the proxy);
// null when the controller cannot tell.
function viewersText(view) {
  if (!view.running) return '—';
  if (view.viewers === null || view.viewers === undefined) return 'unknown';
  return view.viewers === 1 ? '1 viewer' : `${view.viewers} viewers`;
}

function liveViewRow(view) {
  return el(
    'tr',
    {},
    el(
      'th',
      { scope: 'row' },
      `${view.owner_display_name}'s ${view.notebook}`,
      view.note ? el('div', { class: 'hint' }, view.note) : null
    ),
    el('td', {}, view.access === 'read' ? 'read-only' : 'editable'),
    el('td', {}, view.expires_at ? formatDate(view.expires_at) : 'no end'),
    el('td', { class: 'viewers' }, viewersText(view)),
    el(
      'td',
      { class: 'actions' },
      view.running
        ? el('a', { class: 'button', href: view.url, target: '_blank', rel: 'noopener' }, 'Open read-only')
        : el('span', { class: 'hint' }, 'not running'),
      view.owner === ctx.me
        ? el('button', { type: 'button', class: 'danger', onclick: () => endView(view) }, 'End live view')
        : null
    )
  );
}

// The teacher ends their own live view before its time: the share is revoked, and the
// proxy closes the class's open connections to the notebook within seconds.
async function endView(view) {
  if (!confirm(`End the live view of ${view.notebook}? The class stops following it at once.`)) return;
  showError('live-error', null);
  try {
    await api(
      'DELETE',
      `/api/notebooks/${encodeURIComponent(view.owner)}/${encodeURIComponent(view.notebook)}/shares/${view.id}`
    );
    showStatus('Live view ended.');
  } catch (error) {
    showError('live-error', error);
  }
  void reload();
}

function liveNotebookActions(nb) {
  return el(
    'td',
    { class: 'actions' },
    nb.url
      ? el(
          'a',
          { class: 'button', href: nb.url, target: '_blank', rel: 'noopener' },
          nb.access === 'read' ? 'Open read-only' : 'Open (shared with you)'
        )
      : el('span', { class: 'hint' }, 'not shared with you'),
    el('button', { type: 'button', class: 'danger', onclick: () => end(nb) }, 'End')
  );
}

function liveNotebookRow(nb) {
  return el(
    'tr',
    { dataset: { live: `${nb.owner}/${nb.notebook}` } },
    el('th', { scope: 'row' }, nb.owner, el('div', { class: 'hint' }, nb.owner_display_name)),
    el('td', {}, nb.display_name, nb.display_name !== nb.notebook ? el('div', { class: 'hint' }, nb.notebook) : null),
    el(
      'td',
      {},
      el('span', { class: `state state-${nb.state}` }, nb.state),
      nb.started_at ? el('div', { class: 'hint' }, `since ${formatDate(nb.started_at)}`) : null
    ),
    el('td', { class: 'nowrap' }, nb.last_activity ? formatDate(nb.last_activity) : '—'),
    el('td', { class: 'small' }, resources(nb)),
    liveNotebookActions(nb)
  );
}

async function loadLive() {
  const live = await api('GET', `${ctx.base}/live`);
  viewsRunning = live.views.some(view => view.running);
  replaceRows(document.getElementById('live-views'), live.views.map(liveViewRow), 'No live view now.', 5);
  replaceRows(
    document.getElementById('live-notebooks'),
    live.notebooks.map(liveNotebookRow),
    'No student notebook runs now.',
    6
  );
}

/** @param {import('./course_util.js').CourseContext} context */
export function init(context) {
  ctx = context;
  const form =
    /** @type {import('./common.js').FormWith<{ notebook: HTMLSelectElement, minutes: HTMLInputElement }>} */ (
      document.getElementById('broadcast-form')
    );
  form.addEventListener('submit', async event => {
    event.preventDefault();
    showError('broadcast-error', null);
    const [owner, name] = form.elements.notebook.value.split('/');
    if (!name) {
      showError('broadcast-error', new Error('you have no notebook to show; create one on My notebooks'));
      return;
    }
    try {
      const share = await api(
        'POST',
        `/api/notebooks/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/broadcast`,
        {
          group: ctx.group,
          minutes: Number(form.elements.minutes.value)
        }
      );
      showStatus(`Live view started until ${formatDate(share.expires_at)}; the class finds it in its Course panel.`);
      void reload();
    } catch (error) {
      showError('broadcast-error', error);
    }
  });
  document.getElementById('live-refresh').addEventListener('click', () => void reload());
  api('GET', `/api/notebooks?owner=${encodeURIComponent(ctx.me)}`)
    .then(notebooks => {
      form.elements.notebook.replaceChildren(
        ...notebooks.map(nb => el('option', { value: `${nb.owner}/${nb.name}` }, nb.name))
      );
    })
    .catch(error => showError('broadcast-error', error));
  rounds = poll(
    async () => {
      if (!tabShown) return false;
      await loadLive();
      return viewsRunning;
    },
    { everyMs: VIEWERS_MS, onError: error => showError('live-error', error) }
  );
  const live = liveReload(() => `${ctx.base}/live/events`, reload, { fallbackMs: FALLBACK_MS, shown: false });
  return {
    /** Follow the course's notebooks while the tab shows (its opening reloads the tab). */
    visible(shown) {
      tabShown = shown;
      live.show(shown);
    }
  };
}
