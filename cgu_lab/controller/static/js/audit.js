// @ts-check
// The audit log (admins): filtered on the server, paged by cursor (the last id of a page
// asks for the next), details shown as readable lists, and the same filter as CSV.
import { api, el, formatDate, localDateTimeValue, renderDetails, showError } from './common.js';

const PAGE = 50;
const FIELDS = /** @type {const} */ (['actor', 'action', 'target', 'user', 'since', 'until']);
/** @typedef {import('./common.js').FormWith<Record<(typeof FIELDS)[number], HTMLInputElement>>} FilterForm */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['AuditOut']} AuditOut */

const tbody = /** @type {HTMLElement} */ (document.getElementById('events'));
const form = /** @type {FilterForm} */ (document.getElementById('audit-filter'));
const older = /** @type {HTMLButtonElement} */ (document.getElementById('older'));
const newer = /** @type {HTMLButtonElement} */ (document.getElementById('newer'));
const info = /** @type {HTMLElement} */ (document.getElementById('page-info'));
const csv = /** @type {HTMLAnchorElement} */ (document.getElementById('audit-csv'));

// Cursors of the pages seen so far: cursors[i] is the `before` of page i (null: the newest).
/** @type {(number | null | undefined)[]} */
let cursors = [null];
let pageIndex = 0;

/** @param {string} iso */
function localInput(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '' : localDateTimeValue(date);
}

/** The filter as query parameters; times from the local clock, sent as UTC. */
function filterParams() {
  const params = new URLSearchParams();
  for (const name of FIELDS) {
    const value = form.elements[name].value.trim();
    if (!value) continue;
    params.set(name, name === 'since' || name === 'until' ? new Date(value).toISOString() : value);
  }
  return params;
}

function fillFromLocation() {
  const given = new URLSearchParams(location.search);
  for (const name of FIELDS) {
    const value = given.get(name) ?? '';
    form.elements[name].value = (name === 'since' || name === 'until') && value ? localInput(value) : value;
  }
}

/** @param {AuditOut} event */
function eventRow(event) {
  return el(
    'tr',
    { dataset: { id: event.id } },
    el('td', { class: 'when' }, el('time', { datetime: event.at }, formatDate(event.at))),
    el('td', {}, event.actor),
    el('td', {}, el('code', {}, event.action)),
    el('td', {}, event.target || el('span', { class: 'hint' }, '—')),
    el('td', {}, renderDetails(event.details))
  );
}

async function load() {
  const params = filterParams();
  csv.href = `/api/audit/export?${params}`;
  history.replaceState(null, '', params.toString() ? `?${params}` : location.pathname);
  const before = cursors[pageIndex];
  if (before) params.set('before', String(before));
  params.set('limit', String(PAGE + 1)); // one more tells whether an older page exists
  showError('audit-error', null);
  try {
    /** @type {AuditOut[]} */
    const events = await api('GET', `/api/audit?${params}`);
    const shown = events.slice(0, PAGE);
    tbody.replaceChildren(
      ...(shown.length
        ? shown.map(eventRow)
        : [el('tr', {}, el('td', { colspan: 5 }, 'No entries match this filter.'))])
    );
    const hasOlder = events.length > PAGE;
    cursors[pageIndex + 1] = hasOlder ? shown[shown.length - 1].id : undefined;
    older.disabled = !hasOlder;
    newer.disabled = pageIndex === 0;
    info.textContent = shown.length
      ? `Page ${pageIndex + 1}: entries ${pageIndex * PAGE + 1}–${pageIndex * PAGE + shown.length}, newest first`
      : '';
  } catch (error) {
    showError('audit-error', error);
  }
}

function restart() {
  cursors = [null];
  pageIndex = 0;
  load();
}

form.addEventListener('submit', event => {
  event.preventDefault();
  restart();
});
document.getElementById('audit-clear').addEventListener('click', () => {
  form.reset();
  restart();
});
older.addEventListener('click', () => {
  pageIndex += 1;
  load();
});
newer.addEventListener('click', () => {
  pageIndex = Math.max(0, pageIndex - 1);
  load();
});
csv.addEventListener('click', () => {
  csv.href = `/api/audit/export?${filterParams()}`;
});

fillFromLocation();
load();
