// @ts-check
// Users (admins and group managers): every account with its role, groups, last login,
// last activity and notebooks; each name opens the account's own page (user.js).
import { api, el, replaceRows, showStatus, showError, limitsFromForm, fillLimitsForm, ask, timeAgo } from './common.js';
import { liveReload } from './live.js';

const tbody = document.getElementById('users');
const form = /** @type {import('./common.js').FormWith<{ group: HTMLSelectElement }>} */ (
  document.getElementById('user-form')
);
const filter = /** @type {HTMLInputElement} */ (document.getElementById('user-filter'));
const roleFilter = /** @type {HTMLSelectElement} */ (document.getElementById('user-role-filter'));
const runningFilter = /** @type {HTMLInputElement} */ (document.getElementById('user-running-filter'));
let me = null;

const userPath = user => `/api/users/${encodeURIComponent(user.name)}`;

async function editQuota(user) {
  const dialog = /** @type {HTMLDialogElement} */ (document.getElementById('quota-dialog'));
  const quotaForm = /** @type {import('./common.js').LimitsForm} */ (document.getElementById('quota-form'));
  try {
    const current = await api('GET', `${userPath(user)}/quota`);
    fillLimitsForm(quotaForm, current.limits);
  } catch (error) {
    showStatus(error.message, 'error');
    return;
  }
  document.getElementById('quota-title').textContent = `Quota of ${user.name}`;
  document.getElementById('quota-reset').hidden = me.role !== 'admin';
  showError('quota-error', null);
  for (;;) {
    const choice = await ask(dialog);
    if (choice === 'cancel' || !choice) break;
    try {
      if (choice === 'reset') {
        await api('DELETE', `${userPath(user)}/quota`);
      } else {
        await api('PUT', `${userPath(user)}/quota`, limitsFromForm(quotaForm));
      }
      showStatus(`Quota of ${user.name} saved.`);
      break;
    } catch (error) {
      showError('quota-error', error);
    }
  }
  refresh();
}

async function resetPassword(user) {
  if (!confirm(`Give ${user.name} a new one-time password? Their sessions end.`)) return;
  try {
    const result = await api('POST', `${userPath(user)}/password`);
    showStatus(`New one-time password of ${user.name}: ${result.one_time_password}`);
  } catch (error) {
    showStatus(error.message, 'error');
  }
}

async function setActive(user, active) {
  try {
    await api('PATCH', userPath(user), { active });
    showStatus(`${user.name} is ${active ? 'active' : 'deactivated'}.`);
  } catch (error) {
    showStatus(error.message, 'error');
  }
  refresh();
}

async function stopAll(user) {
  if (!confirm(`Stop every notebook of ${user.name}? Unsaved work in them is lost.`)) return;
  try {
    const result = await api('POST', `${userPath(user)}/notebooks/stop`);
    showStatus(result.message);
  } catch (error) {
    showStatus(error.message, 'error');
  }
  refresh();
}

function notebooksCell(user) {
  const parts = [];
  if (user.running) parts.push(el('span', { class: 'state state-running' }, `${user.running} running`));
  if (user.queued) parts.push(el('span', { class: 'state state-queued' }, `${user.queued} waiting`));
  return el(
    'td',
    { class: 'num', dataset: { running: user.running } },
    parts.length
      ? parts.flatMap((part, i) => (i ? [', ', part] : [part]))
      : el('span', { class: 'hint' }, 'none running'),
    el('div', { class: 'hint' }, `${user.notebooks} in all`)
  );
}

function row(user) {
  const admin = me.role === 'admin';
  const page = `/admin/users/${encodeURIComponent(user.name)}`;
  return el(
    'tr',
    { dataset: { user: user.name } },
    el(
      'th',
      { scope: 'row' },
      el('a', { href: page }, user.name),
      el('div', { class: 'hint' }, user.display_name !== user.name ? user.display_name : null),
      user.active ? null : el('span', { class: 'badge warn' }, 'deactivated')
    ),
    el('td', {}, user.role),
    el('td', {}, user.groups.map(g => `${g.name}${g.manager ? ' (manager)' : ''}`).join(', ') || '—'),
    el('td', { class: 'when' }, timeAgo(user.last_login)),
    el('td', { class: 'when' }, timeAgo(user.last_activity)),
    notebooksCell(user),
    el(
      'td',
      { class: 'actions' },
      el('button', { type: 'button', onclick: () => editQuota(user), 'aria-label': `Quota of ${user.name}` }, 'Quota'),
      el(
        'button',
        { type: 'button', onclick: () => resetPassword(user), 'aria-label': `Reset the password of ${user.name}` },
        'Reset password'
      ),
      admin && (user.running || user.queued)
        ? el(
            'button',
            { type: 'button', onclick: () => stopAll(user), 'aria-label': `Stop the notebooks of ${user.name}` },
            'Stop notebooks'
          )
        : null,
      admin && user.name !== me.name
        ? el(
            'button',
            { type: 'button', class: 'danger', onclick: () => setActive(user, !user.active) },
            user.active ? 'Deactivate' : 'Activate'
          )
        : null
    )
  );
}

async function refresh() {
  const params = new URLSearchParams();
  if (filter.value) params.set('q', filter.value);
  if (roleFilter.value) params.set('role', roleFilter.value);
  try {
    let users = await api('GET', `/api/users?${params}`);
    if (runningFilter.checked) users = users.filter(u => u.running || u.queued);
    replaceRows(tbody, users.map(row), 'No accounts match.', 7);
  } catch (error) {
    showStatus(error.message, 'error');
  }
}

form.addEventListener('submit', async event => {
  event.preventDefault();
  const data = new FormData(form);
  showError('user-error', null);
  try {
    const created = await api('POST', '/api/users', {
      name: data.get('name'),
      display_name: data.get('display_name'),
      email: data.get('email'),
      role: data.get('role'),
      group: data.get('group') || null
    });
    const box = document.getElementById('user-created');
    box.replaceChildren(
      `Account ${created.user.name} created. One-time password: `,
      el('code', {}, created.one_time_password)
    );
    box.hidden = false;
    form.reset();
    refresh();
  } catch (error) {
    showError('user-error', error);
  }
});

me = await api('GET', '/api/me');
const groups = await api('GET', '/api/groups');
form.elements.group.append(...groups.filter(g => g.managed).map(g => el('option', { value: g.name }, g.name)));
for (const control of [filter, roleFilter, runningFilter]) control.addEventListener('input', refresh);
refresh();
// Reloaded when a notebook of a listed account changes state (the Notebooks column);
// the slow timer is for what no event announces: logins, activity, new accounts.
liveReload(() => '/api/users/notebooks/events', refresh, { fallbackMs: 60_000 });
