// @ts-check
// One competition: its data, submitting predictions, the leaderboard (public while it
// runs, private once it has ended), my entries; for the course's staff, uploading the
// files and every entry with the scorer's output. My entries' states are polled while
// one is queued or being scored; the leaderboard follows a stream of its changes. In a
// code competition the entry is a notebook, which the platform runs on the hidden inputs
// before scoring what it wrote. With teams, a student forms or joins their own
// (competition_team.js).
import { api, el, replaceRows, showError, showStatus, fact, formatDate, formatMemory, ApiError } from './common.js';
import { poll } from './poll.js';
import { setupTeam } from './competition_team.js';

/** @typedef {import('../../../../src/apiSchema').components['schemas']['CompetitionOut']} Competition */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['CompetitionEntryOut']} Entry */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['CompetitionEntryWithLog']} EntryWithLog */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['CompetitionLeaderboard']} Leaderboard */

const root = /** @type {HTMLElement} */ (document.getElementById('competition-page'));
const id = root.dataset.competition;
const manage = Boolean(root.dataset.manage);
const code = root.dataset.kind === 'code';
const csrf = document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') ?? '';
const POLL_MS = 1500;
/** @type {'public' | 'private'} */
let board = 'public';

/**
 * Send a file as the request's body (the API takes CSV as it is, not inside JSON).
 * @param {string} path
 * @param {File} file
 */
async function upload(path, file) {
  const response = await fetch(path, {
    method: path.includes('/files/') ? 'PUT' : 'POST',
    headers: {
      'Content-Type': code && !path.includes('/files/') ? 'application/x-ipynb+json' : 'text/csv',
      'X-CSRF-Token': csrf,
      Accept: 'application/json'
    },
    credentials: 'same-origin',
    body: file
  });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

/** @param {number | null | undefined} value */
function score(value) {
  return value === null || value === undefined ? '—' : value.toFixed(5);
}

/** @param {Competition} c */
function showFacts(c) {
  const facts = /** @type {HTMLElement} */ (document.getElementById('competition-facts'));
  facts.replaceChildren();
  fact(facts, 'Course', el('a', { href: `/courses/${encodeURIComponent(c.group)}` }, c.group));
  fact(facts, 'Runs', `${formatDate(c.starts_at)} – ${formatDate(c.ends_at)}`);
  fact(facts, 'Metric', `${c.metric_title} (${c.higher_is_better ? 'higher' : 'lower'} is better)`);
  fact(facts, 'Limits', `${c.per_day || 'any number of'} entries a day, ${c.total || 'no limit'} in all`);
  if (c.kind === 'code') {
    fact(facts, 'Notebook runs', `at most ${c.time_limit} s and ${formatMemory(c.memory_limit)}, no network`);
    if (c.gpu_type) fact(facts, 'GPU', `each run takes one GPU of type ${c.gpu_type}`);
  }
  fact(
    facts,
    'Public leaderboard',
    `${Math.round(c.public_fraction * 100)}% of the test set; the rest decides at the end`
  );
  const files = /** @type {HTMLElement} */ (document.getElementById('competition-files'));
  const labels = {
    train: 'Training set',
    test: 'Test inputs',
    solution: 'Hidden solution',
    script: 'Scoring script',
    inputs: 'Hidden test inputs (the notebooks read them)'
  };
  files.replaceChildren(
    ...Object.entries(c.files).map(([kind, info]) =>
      el(
        'li',
        {},
        kind === 'train' || kind === 'test'
          ? el('a', { href: `/api/competitions/${id}/files/${kind}`, download: '' }, labels[kind] ?? kind)
          : `${labels[kind] ?? kind} (uploaded, never shown to students)`,
        ` · ${info.name} · ${formatMemory(info.bytes)}`
      )
    )
  );
  if (!Object.keys(c.files).length) files.append(el('li', { class: 'empty' }, 'No files yet.'));
}

/** @type {EventSource | null} */
let following = null;

// The board follows the platform's stream of it: drawn at once, then again after each
// score, team or settings change, with no polling (open pages cost nothing between
// scores). A refused stream (the private board before the end) closes; the board is
// then asked for once, to show why.
function followBoard() {
  for (const which of ['public', 'private']) {
    document.getElementById(`board-${which}`)?.setAttribute('aria-pressed', String(which === board));
  }
  following?.close();
  const stream = new EventSource(`/api/competitions/${id}/leaderboard/events?board=${board}`);
  following = stream;
  stream.onmessage = event => showBoard(JSON.parse(event.data));
  stream.onerror = () => {
    if (stream.readyState === EventSource.CLOSED && following === stream) void loadBoard();
  };
}

async function loadBoard() {
  try {
    showBoard(await api('GET', `/api/competitions/${id}/leaderboard?board=${board}`));
  } catch (error) {
    /** @type {HTMLElement} */ (document.getElementById('board-hint')).textContent = error.message;
    replaceRows(/** @type {HTMLElement} */ (document.getElementById('leaderboard')), [], 'Not shown yet.', 5);
  }
}

/** @param {Leaderboard} data */
function showBoard(data) {
  const hint = /** @type {HTMLElement} */ (document.getElementById('board-hint'));
  hint.textContent =
    board === 'public'
      ? 'Scored on the public part of the test set.'
      : data.final
        ? 'Final standings: the private part of the test set, for each participant’s best public entry.'
        : 'Preview for the course staff: the private part is revealed to students at the end.';
  replaceRows(
    /** @type {HTMLElement} */ (document.getElementById('leaderboard')),
    data.rows.map(r =>
      el(
        'tr',
        { class: r.mine ? 'mine' : null },
        el('td', { class: 'num' }, r.rank),
        el(
          'th',
          { scope: 'row' },
          r.participant,
          r.team ? el('span', { class: 'badge' }, 'team') : null,
          r.mine ? el('span', { class: 'badge' }, 'you') : null
        ),
        el('td', { class: 'num' }, score(r.score)),
        el('td', { class: 'num' }, r.entries),
        el('td', {}, formatDate(r.submitted_at))
      )
    ),
    'No scored entry yet.',
    5
  );
}

/** @returns {Promise<boolean>} whether an entry is still waiting for its score */
async function loadMine() {
  /** @type {Entry[]} */
  const entries = await api('GET', `/api/competitions/${id}/entries/mine`);
  replaceRows(
    /** @type {HTMLElement} */ (document.getElementById('my-entries')),
    entries.map(e =>
      el(
        'tr',
        { dataset: { entry: e.id, state: e.state } },
        el('td', { class: 'num' }, e.id),
        el('td', {}, formatDate(e.submitted_at), e.team ? el('div', { class: 'hint' }, `by ${e.user}`) : null),
        el('td', {}, e.file_name, e.note ? el('div', { class: 'hint' }, e.note) : null),
        el(
          'td',
          {},
          el('span', { class: `state state-${e.state}` }, e.state),
          e.message ? el('div', { class: 'hint' }, e.message) : null,
          e.gpu_type ? el('div', { class: 'hint' }, `GPU: ${e.gpu_type}`) : null
        ),
        el('td', { class: 'num' }, score(e.public_score)),
        el('td', { class: 'num' }, score(e.private_score))
      )
    ),
    'You have not submitted yet.',
    6
  );
  return entries.some(e => e.state === 'queued' || e.state === 'scoring');
}

async function loadAll() {
  if (!manage) return false;
  /** @type {EntryWithLog[]} */
  const entries = await api('GET', `/api/competitions/${id}/entries`);
  replaceRows(
    /** @type {HTMLElement} */ (document.getElementById('all-entries')),
    entries.map(e =>
      el(
        'tr',
        {},
        el('td', { class: 'num' }, e.id),
        el('td', {}, e.user, e.team ? el('div', { class: 'hint' }, e.team) : null),
        el('td', {}, formatDate(e.submitted_at)),
        el(
          'td',
          {},
          el('span', { class: `state state-${e.state}` }, e.state),
          e.message ? el('div', { class: 'hint' }, e.message) : null,
          e.gpu_type ? el('div', { class: 'hint' }, `GPU: ${e.gpu_type}`) : null
        ),
        el('td', { class: 'num' }, score(e.public_score)),
        el('td', { class: 'num' }, score(e.private_score)),
        el('td', {}, e.log ? el('details', {}, el('summary', {}, 'output'), el('pre', { class: 'mono' }, e.log)) : '—')
      )
    ),
    'No entry yet.',
    7
  );
  return entries.some(e => e.state === 'queued' || e.state === 'scoring');
}

// The entries are loaded again every POLL_MS while one is queued or being scored (the
// board follows its own stream).
const scores = poll(
  async () => {
    const waiting = await Promise.all([loadMine(), loadAll()]);
    return waiting[0] || waiting[1];
  },
  { everyMs: POLL_MS }
);
const refresh = () => scores.now();

const entryForm = /** @type {HTMLFormElement} */ (document.getElementById('entry-form'));
entryForm.addEventListener('submit', async event => {
  event.preventDefault();
  const input = /** @type {HTMLInputElement} */ (entryForm.elements.namedItem('file'));
  const note = /** @type {HTMLInputElement} */ (entryForm.elements.namedItem('note'));
  const file = input.files?.[0];
  if (!file) return;
  try {
    const query = new URLSearchParams({ name: file.name, note: note.value });
    const entry = await upload(`/api/competitions/${id}/entries?${query}`, file);
    showError('entry-error', null);
    showStatus(`Entry ${entry.id} received; it is being ${code ? 'run and ' : ''}scored.`);
    entryForm.reset();
    await refresh();
  } catch (error) {
    showError('entry-error', error);
  }
});

const fileForm = /** @type {HTMLFormElement | null} */ (document.getElementById('file-form'));
fileForm?.addEventListener('submit', async event => {
  event.preventDefault();
  const kind = /** @type {HTMLSelectElement} */ (fileForm.elements.namedItem('kind')).value;
  const file = /** @type {HTMLInputElement} */ (fileForm.elements.namedItem('file')).files?.[0];
  if (!file) return;
  try {
    const described = await upload(
      `/api/competitions/${id}/files/${kind}?${new URLSearchParams({ name: file.name })}`,
      file
    );
    showError('file-error', null);
    showStatus(`Uploaded ${file.name}.`);
    fileForm.reset();
    showFacts(described);
  } catch (error) {
    showError('file-error', error);
  }
});

for (const which of /** @type {const} */ (['public', 'private'])) {
  document.getElementById(`board-${which}`)?.addEventListener('click', () => {
    board = which;
    followBoard();
  });
}

showFacts(await api('GET', `/api/competitions/${id}`));
followBoard();
await Promise.all([refresh(), setupTeam(String(id), refresh)]);
