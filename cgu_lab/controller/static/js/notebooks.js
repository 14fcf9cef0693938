// @ts-check
import {
  api,
  el,
  replaceRows,
  showStatus,
  showError,
  formatCpu,
  formatMemory,
  formatDate,
  ask,
  timeAgo
} from './common.js';
import { liveReload } from './live.js';
import { appLinks } from './notebook_apps.js';
import { initDemos, publishButton } from './notebook_demos.js';
import { initMine } from './class_sessions.js';

/** @typedef {import('../../../../src/apiSchema').components['schemas']['NotebookOut']} NotebookOut */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['GpuTypeOut']} GpuTypeOut */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['SharedWithMe']} SharedWithMe */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['InvitationOut']} InvitationOut */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['UserOut']} UserOut */
/** @typedef {import('../../../../src/apiSchema').components['schemas']['UserActivityOut']} UserActivityOut */
/**
 * @typedef {import('./common.js').FormWith<{
 *   cpu: HTMLInputElement, memory: HTMLInputElement, gpu_type: HTMLSelectElement, gpus: HTMLInputElement
 * }>} ResizeForm
 */

const tbody = /** @type {HTMLElement} */ (document.getElementById('notebooks'));
const filter = /** @type {HTMLInputElement} */ (document.getElementById('filter'));
const stateFilter = /** @type {HTMLSelectElement} */ (document.getElementById('state-filter'));
// Admins only: everyone's notebooks, or one owner's.
const everyone = /** @type {HTMLInputElement | null} */ (document.getElementById('everyone'));
const ownerFilter = /** @type {HTMLInputElement | null} */ (document.getElementById('owner-filter'));
const EVERYONE_KEY = 'cgu-lab.notebooks.everyone';
/** @type {GpuTypeOut[]} */
let gpuTypes = [];
let admin = false;

/** @param {NotebookOut} nb */
function resources(nb) {
  const gpu = nb.gpus ? ` · ${nb.gpus}× ${nb.gpu_type}` : '';
  return `${formatCpu(nb.cpu_milli)} · ${formatMemory(nb.memory)}${gpu}`;
}

/** @param {NotebookOut} nb */
function path(nb) {
  return `/api/notebooks/${encodeURIComponent(nb.owner)}/${encodeURIComponent(nb.name)}`;
}

/**
 * @param {NotebookOut} nb
 * @param {'start' | 'stop'} verb
 */
async function act(nb, verb) {
  try {
    await api('POST', `${path(nb)}/${verb}`);
    const done = verb === 'start' ? 'starting…' : nb.state === 'queued' ? 'left the queue.' : 'stopping…';
    showStatus(`${nb.name}: ${done}`);
  } catch (error) {
    showStatus(error.message, 'error');
  }
  refresh();
}

/** @param {NotebookOut} nb */
async function remove(nb) {
  const queued = nb.state === 'queued';
  const question = queued
    ? `Stop waiting for a GPU and delete notebook "${nb.name}"? Its files move to the platform's trash.`
    : `Delete notebook "${nb.name}"? Its files move to the platform's trash.`;
  if (!confirm(question)) return;
  try {
    // A queued notebook leaves the queue first (that is its stop), then it is deleted.
    if (queued) await api('POST', `${path(nb)}/stop`);
    await api('DELETE', path(nb));
    showStatus(`${nb.name} was deleted`);
  } catch (error) {
    showStatus(error.message, 'error');
  }
  refresh();
}

/** @param {NotebookOut} nb */
async function togglePersistent(nb) {
  try {
    await api('PATCH', path(nb), { persistent: !nb.persistent });
    showStatus(
      nb.persistent
        ? `${nb.name} is no longer persistent: the idle culler may stop it.`
        : `${nb.name} is persistent: the idle culler and reclaim never stop it.`
    );
  } catch (error) {
    showStatus(error.message, 'error');
  }
  refresh();
}

/** @param {NotebookOut} nb */
async function resize(nb) {
  const dialog = /** @type {HTMLDialogElement} */ (document.getElementById('resize-dialog'));
  const form = /** @type {ResizeForm} */ (document.getElementById('resize-form'));
  form.elements.cpu.value = String(nb.cpu_milli / 1000);
  form.elements.memory.value = formatMemory(nb.memory).replace(' ', '');
  form.elements.gpu_type.replaceChildren(
    el('option', { value: '' }, 'none'),
    ...gpuTypes.map(t => el('option', { value: t.name, selected: t.name === nb.gpu_type }, t.display_name || t.name))
  );
  form.elements.gpus.value = String(nb.gpus);
  showError('resize-error', null);
  document.getElementById('resize-title').textContent = `Resize ${nb.name}`;
  while ((await ask(dialog)) === 'apply') {
    const body = {
      cpu: form.elements.cpu.value,
      memory: form.elements.memory.value,
      gpus: Number(form.elements.gpus.value || 0),
      gpu_type: form.elements.gpu_type.value || ''
    };
    // A GPU type with 0 GPUs would quietly mean "no GPU": say so instead.
    if (body.gpu_type && !body.gpus) {
      showError(
        'resize-error',
        new Error(
          `You chose GPU type "${body.gpu_type}" but 0 GPUs: ask for at least 1 GPU, or choose GPU type "none".`
        )
      );
      continue;
    }
    if (body.gpus && !body.gpu_type) {
      showError('resize-error', new Error(`Choose a GPU type for the ${body.gpus} GPU(s) you ask for.`));
      continue;
    }
    try {
      await api('PATCH', path(nb), body);
      showStatus(nb.state === 'running' ? `${nb.name} restarts with the new resources…` : `${nb.name} was resized`);
      break;
    } catch (error) {
      showError('resize-error', error);
    }
  }
  refresh();
}

/** @param {NotebookOut} nb */
function messageClass(nb) {
  if (nb.state !== 'stopped') return 'note-info'; // a queue place, a start's notice
  return /^Stopped by/.test(nb.message) ? 'note-warn' : 'error';
}

/**
 * @param {NotebookOut} nb
 * @param {boolean} mine
 */
function nameCell(nb, mine) {
  const label = mine ? nb.name : `${nb.owner}/${nb.name}`;
  return el(
    'th',
    { scope: 'row' },
    nb.state === 'running' && mine ? el('a', { href: nb.url }, label) : label,
    nb.persistent ? el('span', { class: 'badge', title: 'never stopped for being idle' }, 'persistent') : null,
    nb.display_name && nb.display_name !== nb.name ? el('div', { class: 'hint' }, nb.display_name) : null
  );
}

/**
 * @param {NotebookOut} nb
 * @param {boolean} mine
 */
function ownerCell(nb, mine) {
  return el(
    'td',
    { class: 'owner-col' },
    mine
      ? el('span', { class: 'hint' }, 'me')
      : el(
          'a',
          {
            href: `/admin/users/${encodeURIComponent(nb.owner)}`,
            title: `${nb.owner}'s page: open as yourself from there`
          },
          nb.owner
        )
  );
}

/** @param {NotebookOut} nb */
function persistentToggle(nb) {
  return el(
    'button',
    {
      type: 'button',
      'aria-pressed': String(nb.persistent),
      class: 'toggle',
      onclick: () => togglePersistent(nb),
      title: 'A persistent notebook is never stopped by the idle culler or reclaim'
    },
    'Persistent'
  );
}

/**
 * @param {NotebookOut} nb
 * @param {boolean} mine
 */
function actionsCell(nb, mine) {
  const running = nb.state === 'running';
  const busy = nb.state === 'starting' || nb.state === 'stopping';
  const queued = nb.state === 'queued';
  return el(
    'td',
    { class: 'actions' },
    running && mine ? el('a', { class: 'button primary', href: nb.url }, 'Open') : null,
    mine ? appLinks(nb) : null,
    nb.state === 'stopped'
      ? el('button', { type: 'button', class: 'primary', onclick: () => act(nb, 'start') }, 'Start')
      : null,
    running || nb.state === 'starting'
      ? el('button', { type: 'button', onclick: () => act(nb, 'stop') }, 'Stop')
      : null,
    queued
      ? el(
          'button',
          { type: 'button', onclick: () => act(nb, 'stop'), 'aria-label': `Leave the queue: ${nb.name}` },
          'Leave queue'
        )
      : null,
    publishButton(nb, mine),
    el('button', { type: 'button', disabled: busy, onclick: () => resize(nb) }, 'Resize'),
    admin ? persistentToggle(nb) : null,
    el(
      'button',
      {
        type: 'button',
        class: 'danger',
        disabled: !(nb.state === 'stopped' || queued),
        onclick: () => remove(nb)
      },
      'Delete'
    )
  );
}

/** @param {NotebookOut} nb */
function row(nb) {
  const queued = nb.state === 'queued';
  const mine = nb.owner === window.cguMe;
  return el(
    'tr',
    { dataset: { notebook: `${nb.owner}/${nb.name}`, state: nb.state } },
    nameCell(nb, mine),
    ownerCell(nb, mine),
    el('td', {}, resources(nb), el('div', { class: 'hint' }, nb.environment)),
    el(
      'td',
      {},
      el('span', { class: `state state-${nb.state}` }, queued ? 'queued (waiting for a GPU)' : nb.state),
      nb.message ? el('div', { class: `small ${messageClass(nb)}` }, nb.message) : null
    ),
    el('td', { class: 'when' }, timeAgo(nb.last_activity, '—')),
    actionsCell(nb, mine)
  );
}

async function refreshShared() {
  /** @type {SharedWithMe[]} */
  const shared = await api('GET', '/api/shared-with-me');
  replaceRows(
    document.getElementById('shared'),
    shared.map(item =>
      el(
        'tr',
        {},
        el('th', { scope: 'row' }, el('a', { href: item.url }, `${item.notebook}${item.path ? '/' + item.path : ''}`)),
        el('td', {}, item.owner_display_name || item.owner),
        el('td', {}, item.access === 'edit' ? 'can edit' : 'read-only'),
        el('td', {}, item.expires_at ? formatDate(item.expires_at) : 'no end'),
        el('td', {}, el('span', { class: `state state-${item.state}` }, item.state))
      )
    ),
    'Nothing is shared with you right now.',
    5
  );
}

/** Whose notebooks the list shows: `owner` as GET /api/notebooks takes it (none: everyone's). */
function listed() {
  const owner = ownerFilter?.value.trim().toLowerCase();
  const params = new URLSearchParams();
  if (owner) params.set('owner', owner);
  else if (!everyone?.checked) params.set('owner', window.cguMe);
  return params;
}

async function refresh() {
  const params = listed();
  if (filter.value) params.set('q', filter.value);
  if (stateFilter.value) params.set('state', stateFilter.value);
  const owner = params.get('owner');
  const others = owner !== window.cguMe;
  document.getElementById('notebooks-table')?.classList.toggle('mine-only', !others);
  try {
    /** @type {NotebookOut[]} */
    const notebooks = await api('GET', `/api/notebooks?${params}`);
    const empty =
      others || params.has('q') || params.has('state')
        ? 'No notebooks match.'
        : 'No notebooks yet. Create one to get started.';
    replaceRows(tbody, notebooks.map(row), empty, 6);
  } catch (error) {
    showStatus(error.message, 'error');
  }
}

// A banner when teachers invited the user to a course: they answer on the account page.
async function showInvitations() {
  const banner = /** @type {HTMLElement} */ (document.getElementById('invitations-banner'));
  /** @type {InvitationOut[]} */
  let pending = [];
  try {
    pending = await api('GET', '/api/me/invitations');
  } catch {
    banner.dataset.state = 'unknown';
    return; // the banner is a courtesy: never break the notebook list for it
  }
  banner.dataset.state = pending.length ? 'pending' : 'none';
  if (!pending.length) {
    banner.hidden = true;
    return;
  }
  const names = pending.map(i => i.display_name || i.group).join(', ');
  banner.replaceChildren(
    pending.length === 1
      ? `You are invited to join ${names}. `
      : `You have ${pending.length} course invitations: ${names}. `,
    el('a', { href: '/account#invitations' }, 'Accept or decline on your account page')
  );
  banner.hidden = false;
}

async function main() {
  showInvitations();
  if (everyone) {
    // The admin's choice of list is remembered in this browser. Restored before anything
    // is awaited: restored after, it undid a click made while the page loaded.
    everyone.checked = localStorage.getItem(EVERYONE_KEY) === 'yes';
    everyone.addEventListener('change', () => localStorage.setItem(EVERYONE_KEY, everyone.checked ? 'yes' : 'no'));
  }
  /** @type {UserOut} */
  const me = await api('GET', '/api/me');
  window.cguMe = me.name;
  admin = me.role === 'admin';
  gpuTypes = await api('GET', '/api/gpu-types');
  await initDemos(me).catch(() => undefined); // no Publish button rather than no list
  if (everyone) {
    api('GET', '/api/users')
      .then((/** @type {UserActivityOut[]} */ users) =>
        document
          .getElementById('owner-names')
          ?.replaceChildren(...users.map(u => el('option', { value: u.name }, u.display_name)))
      )
      .catch(() => {});
  }
  // State changes arrive as events of the listed owner's notebooks (or everyone's). A
  // class session's seat shows its pre-warmed notebook's state, so it follows them too:
  // loaded once, a seat opened while its notebook started said "starting" for good.
  const live = liveReload(
    () => `/api/notebooks/events?${listed()}`,
    () => {
      refresh();
      initMine();
    }
  );
  for (const control of [filter, stateFilter]) {
    control.addEventListener('input', refresh);
  }
  for (const control of [everyone, ownerFilter]) {
    control?.addEventListener('input', () => {
      live.reconnect();
      refresh();
    });
  }
  refresh();
  refreshShared();
  initMine();
}

main();
