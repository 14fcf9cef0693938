import {
  api, el, replaceRows, showStatus, showError, formatCpu, formatMemory, formatDate, ask
} from './common.js';

const tbody = document.getElementById('notebooks');
const filter = document.getElementById('filter');
const stateFilter = document.getElementById('state-filter');
const everyone = document.getElementById('everyone');
let gpuTypes = [];

function resources(nb) {
  const gpu = nb.gpus ? ` · ${nb.gpus}× ${nb.gpu_type}` : '';
  return `${formatCpu(nb.cpu_milli)} · ${formatMemory(nb.memory)}${gpu}`;
}

function path(nb) {
  return `/api/notebooks/${encodeURIComponent(nb.owner)}/${encodeURIComponent(nb.name)}`;
}

async function act(nb, verb) {
  try {
    await api('POST', `${path(nb)}/${verb}`);
    showStatus(`${nb.name}: ${verb === 'start' ? 'starting' : 'stopping'}…`);
  } catch (error) {
    showStatus(error.message, 'error');
  }
  refresh();
}

async function remove(nb) {
  if (!confirm(`Delete notebook "${nb.name}"? Its files move to the platform's trash.`)) return;
  try {
    await api('DELETE', path(nb));
    showStatus(`${nb.name} was deleted`);
  } catch (error) {
    showStatus(error.message, 'error');
  }
  refresh();
}

async function resize(nb) {
  const dialog = document.getElementById('resize-dialog');
  const form = document.getElementById('resize-form');
  form.elements.cpu.value = nb.cpu_milli / 1000;
  form.elements.memory.value = formatMemory(nb.memory).replace(' ', '');
  form.elements.gpu_type.replaceChildren(
    el('option', { value: '' }, 'none'),
    ...gpuTypes.map(t => el('option', { value: t.name, selected: t.name === nb.gpu_type }, t.display_name || t.name))
  );
  form.elements.gpus.value = nb.gpus;
  showError('resize-error', null);
  document.getElementById('resize-title').textContent = `Resize ${nb.name}`;
  while ((await ask(dialog)) === 'apply') {
    const body = {
      cpu: form.elements.cpu.value,
      memory: form.elements.memory.value,
      gpus: Number(form.elements.gpus.value || 0),
      gpu_type: form.elements.gpu_type.value || ''
    };
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

function row(nb) {
  const running = nb.state === 'running';
  const busy = nb.state === 'starting' || nb.state === 'stopping';
  const label = nb.owner === window.cguMe ? nb.name : `${nb.owner}/${nb.name}`;
  return el('tr', { dataset: { notebook: `${nb.owner}/${nb.name}` } },
    el('th', { scope: 'row' },
      running ? el('a', { href: nb.url }, label) : label,
      nb.persistent ? el('span', { class: 'badge', title: 'never stopped for being idle' }, 'persistent') : null,
      nb.display_name && nb.display_name !== nb.name ? el('div', { class: 'hint' }, nb.display_name) : null
    ),
    el('td', {}, resources(nb), el('div', { class: 'hint' }, nb.environment)),
    el('td', {},
      el('span', { class: `state state-${nb.state}` }, nb.state),
      nb.message ? el('div', { class: 'error small' }, nb.message) : null
    ),
    el('td', { class: 'actions' },
      running ? el('a', { class: 'button primary', href: nb.url }, 'Open') : null,
      nb.state === 'stopped'
        ? el('button', { type: 'button', class: 'primary', onclick: () => act(nb, 'start') }, 'Start')
        : null,
      running || nb.state === 'starting'
        ? el('button', { type: 'button', onclick: () => act(nb, 'stop') }, 'Stop')
        : null,
      el('button', { type: 'button', disabled: busy, onclick: () => resize(nb) }, 'Resize'),
      el('button', { type: 'button', class: 'danger', disabled: nb.state !== 'stopped', onclick: () => remove(nb) }, 'Delete')
    )
  );
}

async function refreshShared() {
  const shared = await api('GET', '/api/shared-with-me');
  replaceRows(document.getElementById('shared'), shared.map(item => el('tr', {},
    el('th', { scope: 'row' }, el('a', { href: item.url }, `${item.notebook}${item.path ? '/' + item.path : ''}`)),
    el('td', {}, item.owner_display_name || item.owner),
    el('td', {}, item.access === 'edit' ? 'can edit' : 'read-only'),
    el('td', {}, item.expires_at ? formatDate(item.expires_at) : 'no end'),
    el('td', {}, el('span', { class: `state state-${item.state}` }, item.state))
  )), 'Nothing is shared with you right now.', 5);
}

let timer = null;
async function refresh() {
  clearTimeout(timer);
  const params = new URLSearchParams();
  if (filter.value) params.set('q', filter.value);
  if (stateFilter.value) params.set('state', stateFilter.value);
  if (!everyone?.checked) params.set('owner', window.cguMe);
  try {
    const notebooks = await api('GET', `/api/notebooks?${params}`);
    replaceRows(tbody, notebooks.map(row), 'No notebooks yet. Create one to get started.', 4);
    const pending = notebooks.some(nb => nb.state === 'starting' || nb.state === 'stopping');
    timer = setTimeout(refresh, pending ? 1500 : 10000);
  } catch (error) {
    showStatus(error.message, 'error');
  }
}

// A banner when teachers invited the user to a course: they answer on the account page.
async function showInvitations() {
  const banner = document.getElementById('invitations-banner');
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
  const me = await api('GET', '/api/me');
  window.cguMe = me.name;
  gpuTypes = await api('GET', '/api/gpu-types');
  for (const control of [filter, stateFilter, everyone]) {
    control?.addEventListener('input', refresh);
  }
  refresh();
  refreshShared();
}

main();
