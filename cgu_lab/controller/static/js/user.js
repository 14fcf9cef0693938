// @ts-check
// One account (admins and the managers of its groups): facts, role, quota use and groups;
// for admins also its notebooks (start, stop, open as oneself) and recent audit entries.
import {
  api,
  el,
  replaceRows,
  showStatus,
  showError,
  fact,
  formatDate,
  formatCpu,
  formatMemory,
  describeLimits,
  describeUsage,
  fillLimitsForm,
  limitsFromForm,
  ask,
  timeAgo,
  renderDetails
} from './common.js';
import { liveReload } from './live.js';

const root = document.getElementById('user-page');
const name = root.dataset.user;
const isAdmin = root.dataset.admin === 'yes';
const base = `/api/users/${encodeURIComponent(name)}`;
let me = null;
let user = null;
/** @type {string | null} the role the role form's select was last set to */
let drawnRole = null;

// -- the account -------------------------------------------------------------------

function drawAccount() {
  const facts = document.getElementById('account-facts');
  facts.replaceChildren();
  fact(facts, 'Full name', user.display_name || '—');
  fact(facts, 'Email', user.email || '—');
  fact(facts, 'Role', el('span', { id: 'user-role' }, user.role));
  fact(facts, 'State', user.active ? 'active' : el('span', { class: 'badge warn' }, 'deactivated'));
  if (user.must_change_password) fact(facts, 'Password', 'one-time (not chosen yet)');
  fact(facts, 'Created', formatDate(user.created_at));
  fact(facts, 'Last login', timeAgo(user.last_login));
  fact(facts, 'Last activity', timeAgo(user.last_activity));
  fact(facts, 'Notebooks', `${user.running} running, ${user.queued} waiting, ${user.notebooks} in all`);
  const roleForm = /** @type {import('./common.js').FormWith<{ role: HTMLSelectElement }> | null} */ (
    document.getElementById('role-form')
  );
  if (roleForm) {
    // A live reload must not undo a role the admin is choosing: the select follows the
    // account's role only while it still shows the role drawn last.
    const select = roleForm.elements.role;
    if (drawnRole === null || select.value === drawnRole) select.value = user.role;
    drawnRole = user.role;
  }
  const actions = document.getElementById('account-actions');
  actions.replaceChildren(
    el('button', { type: 'button', onclick: resetPassword }, 'Reset password'),
    isAdmin && user.name !== me.name
      ? el(
          'button',
          { type: 'button', class: 'danger', onclick: () => setActive(!user.active) },
          user.active ? 'Deactivate' : 'Activate'
        )
      : null
  );
  replaceRows(
    document.getElementById('user-groups'),
    user.groups.map(g =>
      el(
        'tr',
        {},
        el('th', { scope: 'row' }, el('a', { href: `/admin/groups/${encodeURIComponent(g.name)}` }, g.name)),
        el('td', {}, g.manager ? 'manager' : 'member')
      )
    ),
    'Not in any group.',
    2
  );
}

async function loadAccount() {
  user = await api('GET', base);
  drawAccount();
}

async function resetPassword() {
  if (!confirm(`Give ${name} a new one-time password? Their sessions end.`)) return;
  try {
    const result = await api('POST', `${base}/password`);
    showStatus(`New one-time password of ${name}: ${result.one_time_password}`);
  } catch (error) {
    showStatus(error.message, 'error');
  }
}

async function setActive(active) {
  try {
    await api('PATCH', base, { active });
    showStatus(`${name} is ${active ? 'active' : 'deactivated'}.`);
  } catch (error) {
    showStatus(error.message, 'error');
  }
  await loadAll();
}

const roleForm = /** @type {import('./common.js').FormWith<{ role: HTMLSelectElement }> | null} */ (
  document.getElementById('role-form')
);
roleForm?.addEventListener('submit', async event => {
  event.preventDefault();
  const role = roleForm.elements.role.value;
  showError('role-error', null);
  if (role === user.role) {
    showStatus(`${name} is already ${role === 'ta' ? 'a TA' : `a ${role}`}.`);
    return;
  }
  try {
    await api('PATCH', base, { role });
    showStatus(`${name} is now ${role === 'ta' ? 'a TA' : role === 'admin' ? 'an admin' : `a ${role}`}.`);
    await loadAll();
  } catch (error) {
    showError('role-error', error);
  }
});

// -- quota -------------------------------------------------------------------------

async function loadQuota() {
  const facts = document.getElementById('quota-facts');
  try {
    const quota = await api('GET', `${base}/quota`);
    facts.replaceChildren();
    fact(
      facts,
      'Quota',
      `${quota.source === 'user' ? 'own' : 'the platform default'}: ${describeLimits(quota.limits)}`
    );
    fact(facts, 'In use now', describeUsage(quota.usage));
  } catch (error) {
    facts.replaceChildren(el('dt', {}, 'Quota'), el('dd', {}, error.message));
  }
}

document.getElementById('edit-quota').addEventListener('click', async () => {
  const dialog = /** @type {HTMLDialogElement} */ (document.getElementById('quota-dialog'));
  const form = /** @type {import('./common.js').LimitsForm} */ (document.getElementById('quota-form'));
  const current = await api('GET', `${base}/quota`);
  fillLimitsForm(form, current.limits);
  document.getElementById('quota-title').textContent = `Quota of ${name}`;
  document.getElementById('quota-reset').hidden = !isAdmin;
  showError('quota-error', null);
  for (;;) {
    const choice = await ask(dialog);
    if (choice === 'cancel' || !choice) break;
    try {
      if (choice === 'reset') await api('DELETE', `${base}/quota`);
      else await api('PUT', `${base}/quota`, limitsFromForm(form));
      showStatus(`Quota of ${name} saved.`);
      break;
    } catch (error) {
      showError('quota-error', error);
    }
  }
  loadQuota();
});

// -- notebooks (admins) ------------------------------------------------------------

function nbPath(nb) {
  return `/api/notebooks/${encodeURIComponent(nb.owner)}/${encodeURIComponent(nb.name)}`;
}

async function act(nb, verb) {
  try {
    await api('POST', `${nbPath(nb)}/${verb}`);
    const what = { start: 'starting', stop: nb.state === 'queued' ? 'left the queue' : 'stopping' }[verb];
    showStatus(`${nb.name}: ${what}.`);
  } catch (error) {
    showStatus(error.message, 'error');
  }
  await loadAll();
}

async function openAsMe(nb) {
  const dialog = /** @type {HTMLDialogElement} */ (document.getElementById('open-dialog'));
  const form = /** @type {import('./common.js').FormWith<{
    access: HTMLSelectElement, minutes: HTMLSelectElement, reason: HTMLInputElement
  }>} */ (document.getElementById('open-form'));
  document.getElementById('open-title').textContent = `Open ${nb.owner}/${nb.name} as ${me.name}`;
  showError('open-error', null);
  // A missing reason is refused by the controller like any other mistake: its sentence
  // shows in the dialog, which stays open until the access is given or Cancel is pressed.
  while ((await ask(dialog)) === 'open') {
    try {
      const granted = await api('POST', `${nbPath(nb)}/admin-access`, {
        access: form.elements.access.value,
        minutes: Number(form.elements.minutes.value),
        reason: form.elements.reason.value.trim()
      });
      // Open it: the notebook when it runs, else its start page (starting it, with progress).
      showStatus(
        `You have ${granted.access === 'edit' ? 'editable' : 'read-only'} access to ${nb.owner}/${nb.name} until ${formatDate(granted.expires_at)}; opening it…`
      );
      window.location.assign(granted.open_url);
      return;
    } catch (error) {
      showError('open-error', error);
    }
  }
  await loadAudit();
}

function notebookRow(nb) {
  const gpu = nb.gpus ? ` · ${nb.gpus}× ${nb.gpu_type}` : '';
  const running = nb.state === 'running';
  return el(
    'tr',
    { dataset: { notebook: `${nb.owner}/${nb.name}` } },
    el('th', { scope: 'row' }, nb.name, nb.persistent ? el('span', { class: 'badge' }, 'persistent') : null),
    el('td', {}, `${formatCpu(nb.cpu_milli)} · ${formatMemory(nb.memory)}${gpu}`),
    el(
      'td',
      {},
      el('span', { class: `state state-${nb.state}` }, nb.state),
      nb.message ? el('div', { class: 'small note-info' }, nb.message) : null
    ),
    el('td', { class: 'when' }, timeAgo(nb.last_activity)),
    el(
      'td',
      { class: 'actions' },
      nb.state === 'stopped'
        ? el('button', { type: 'button', onclick: () => act(nb, 'start'), 'aria-label': `Start ${nb.name}` }, 'Start')
        : null,
      ['running', 'starting', 'queued'].includes(nb.state)
        ? el(
            'button',
            {
              type: 'button',
              onclick: () => act(nb, 'stop'),
              'aria-label': `${nb.state === 'queued' ? 'Cancel' : 'Stop'} ${nb.name}`
            },
            nb.state === 'queued' ? 'Leave queue' : 'Stop'
          )
        : null,
      nb.owner !== me.name
        ? el(
            'button',
            {
              type: 'button',
              class: running ? 'primary' : null,
              onclick: () => openAsMe(nb),
              'aria-label': `Open ${nb.name} as me`
            },
            'Open as me'
          )
        : null
    )
  );
}

async function loadNotebooks() {
  const notebooks = await api('GET', `/api/notebooks?owner=${encodeURIComponent(name)}`);
  replaceRows(document.getElementById('user-notebooks'), notebooks.map(notebookRow), `${name} has no notebooks.`, 5);
}

async function loadAudit() {
  const events = await api('GET', `/api/audit?user=${encodeURIComponent(name)}&limit=15`);
  replaceRows(
    document.getElementById('user-audit'),
    events.map(event =>
      el(
        'tr',
        {},
        el('td', { class: 'when' }, timeAgo(event.at)),
        el('td', {}, event.actor),
        el('td', {}, el('code', {}, event.action)),
        el('td', {}, event.target),
        el('td', {}, renderDetails(event.details))
      )
    ),
    'Nothing recorded yet.',
    5
  );
}

async function loadAll() {
  await loadAccount();
  await loadQuota();
  if (isAdmin) await Promise.all([loadNotebooks(), loadAudit()]);
}

// Reloaded when one of the account's notebooks changes state (its counts, quota use,
// notebooks and audit entries follow). The slow timer is for what no event announces:
// last login and activity, notebooks created or deleted, audit entries of other acts.
const FALLBACK_MS = 60_000;

try {
  me = await api('GET', '/api/me');
  await loadAll();
  liveReload(
    () => `/api/users/notebooks/events?user=${encodeURIComponent(name)}`,
    () => loadAll().catch(error => showStatus(error.message, 'error')),
    { fallbackMs: FALLBACK_MS }
  );
} catch (error) {
  showStatus(error.message, 'error');
}
