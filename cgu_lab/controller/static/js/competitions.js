// @ts-check
// The competitions of my courses; course staff create new ones here (files next, on
// the competition's own page).
import { api, el, replaceRows, showError, formatDate, localDateTimeValue } from './common.js';

/** @typedef {import('../../../../src/apiSchema').components['schemas']['CompetitionOut']} Competition */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['GroupOut']} Group */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['GpuTypeOut']} GpuType */

const PHASES = { upcoming: 'Not started', open: 'Open', closed: 'Ended' };

async function load() {
  /** @type {Competition[]} */
  const competitions = await api('GET', '/api/competitions');
  replaceRows(
    /** @type {HTMLElement} */ (document.getElementById('competitions')),
    competitions.map(c =>
      el(
        'tr',
        { dataset: { competition: c.id } },
        el('th', { scope: 'row' }, el('a', { href: `/competitions/${c.id}` }, c.title)),
        el('td', {}, el('a', { href: `/courses/${encodeURIComponent(c.group)}` }, c.group)),
        el('td', {}, PHASES[c.phase] ?? c.phase),
        el('td', {}, formatDate(c.ends_at)),
        el('td', {}, c.metric_title)
      )
    ),
    'No competition in your courses yet.',
    5
  );
}

/**
 * @param {string} local a datetime-local value, read in the browser's time zone
 * @returns {string} ISO 8601 with the zone
 */
function isoOf(local) {
  return new Date(local).toISOString();
}

/** How long a new competition runs unless its author says otherwise. */
const DEFAULT_DAYS = 14;

/**
 * The form's start and end at first: now, rounded down to five minutes (open at once),
 * and two weeks later, in the browser's local time as datetime-local inputs show it.
 * @param {HTMLFormElement} form
 * @param {Date} now
 */
function fillDefaultTimes(form, now) {
  const start = new Date(now);
  start.setSeconds(0, 0);
  start.setMinutes(start.getMinutes() - (start.getMinutes() % 5));
  const end = new Date(start);
  end.setDate(end.getDate() + DEFAULT_DAYS); // calendar days: the same clock time across a DST change
  for (const [name, moment] of /** @type {[string, Date][]} */ ([
    ['starts_at', start],
    ['ends_at', end]
  ])) {
    const input = /** @type {HTMLInputElement} */ (form.elements.namedItem(name));
    if (!input.value) input.value = localDateTimeValue(moment);
  }
}

const form = /** @type {HTMLFormElement | null} */ (document.getElementById('new-competition-form'));
if (form) {
  fillDefaultTimes(form, new Date());
  /** @type {Group[]} */
  const groups = await api('GET', '/api/groups');
  const select = /** @type {HTMLSelectElement} */ (form.elements.namedItem('group'));
  select.replaceChildren(
    ...groups
      .filter(g => g.managed && g.kind === 'course')
      .map(g => el('option', { value: g.name }, g.display_name || g.name))
  );
  /** @type {GpuType[]} */
  const gpuTypes = await api('GET', '/api/gpu-types');
  const gpuSelect = /** @type {HTMLSelectElement} */ (form.elements.namedItem('gpu_type'));
  gpuSelect.replaceChildren(
    el('option', { value: '' }, 'None'),
    ...gpuTypes.map(t => el('option', { value: t.name }, t.display_name ? `${t.display_name} (${t.name})` : t.name))
  );
  form.addEventListener('submit', async event => {
    event.preventDefault();
    const data = new FormData(form);
    const text = (/** @type {string} */ name) => String(data.get(name) ?? '');
    try {
      const created = await api('POST', `/api/groups/${encodeURIComponent(text('group'))}/competitions`, {
        name: text('name'),
        title: text('title'),
        description: text('description'),
        starts_at: isoOf(text('starts_at')),
        ends_at: isoOf(text('ends_at')),
        metric: text('metric'),
        id_column: text('id_column'),
        target_column: text('target_column'),
        public_fraction: Number(text('public_percent')) / 100,
        per_day: Number(text('per_day')),
        total: Number(text('total')),
        teams: data.get('teams') === 'on',
        kind: text('kind') === 'code' ? 'code' : 'predictions',
        time_limit: Number(text('time_limit')),
        gpu_type: text('kind') === 'code' && text('gpu_type') ? text('gpu_type') : null
      });
      window.location.assign(`/competitions/${created.id}`);
    } catch (error) {
      showError('new-competition-error', error);
    }
  });
}
await load();
