import {
  api, el, replaceRows, showStatus, showError, describeLimits, limitsFromForm, fillLimitsForm, ask
} from './common.js';

const tbody = document.getElementById('users');
const form = document.getElementById('user-form');
const filter = document.getElementById('user-filter');
const roleFilter = document.getElementById('user-role-filter');
let me = null;

async function editQuota(user) {
  const dialog = document.getElementById('quota-dialog');
  const quotaForm = document.getElementById('quota-form');
  const current = await api('GET', `/api/users/${encodeURIComponent(user.name)}/quota`);
  fillLimitsForm(quotaForm, current.limits);
  document.getElementById('quota-title').textContent = `Quota of ${user.name}`;
  document.getElementById('quota-reset').hidden = me.role !== 'admin';
  showError('quota-error', null);
  for (;;) {
    const choice = await ask(dialog);
    if (choice === 'cancel' || !choice) break;
    try {
      if (choice === 'reset') {
        await api('DELETE', `/api/users/${encodeURIComponent(user.name)}/quota`);
      } else {
        await api('PUT', `/api/users/${encodeURIComponent(user.name)}/quota`, limitsFromForm(quotaForm));
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
    const result = await api('POST', `/api/users/${encodeURIComponent(user.name)}/password`);
    showStatus(`New one-time password of ${user.name}: ${result.one_time_password}`);
  } catch (error) {
    showStatus(error.message, 'error');
  }
}

async function setActive(user, active) {
  try {
    await api('PATCH', `/api/users/${encodeURIComponent(user.name)}`, { active });
    showStatus(`${user.name} is ${active ? 'active' : 'deactivated'}.`);
  } catch (error) {
    showStatus(error.message, 'error');
  }
  refresh();
}

async function row(user) {
  let quota = '';
  try {
    const q = await api('GET', `/api/users/${encodeURIComponent(user.name)}/quota`);
    quota = `${q.source === 'user' ? '' : '(default) '}${describeLimits(q.limits)}`;
  } catch {
    quota = '—';
  }
  const admin = me.role === 'admin';
  return el('tr', { dataset: { user: user.name } },
    el('th', { scope: 'row' }, user.name, el('div', { class: 'hint' }, user.display_name),
      user.active ? null : el('span', { class: 'badge warn' }, 'deactivated')),
    el('td', {}, user.role),
    el('td', {}, user.groups.map(g => `${g.name}${g.manager ? ' (manager)' : ''}`).join(', ') || '—'),
    el('td', { class: 'small' }, quota),
    el('td', { class: 'actions' },
      el('button', { type: 'button', onclick: () => editQuota(user) }, 'Quota'),
      el('button', { type: 'button', onclick: () => resetPassword(user) }, 'Reset password'),
      admin && user.name !== me.name
        ? el('button', { type: 'button', class: 'danger', onclick: () => setActive(user, !user.active) },
            user.active ? 'Deactivate' : 'Activate')
        : null
    )
  );
}

async function refresh() {
  const params = new URLSearchParams();
  if (filter.value) params.set('q', filter.value);
  if (roleFilter.value) params.set('role', roleFilter.value);
  try {
    const users = await api('GET', `/api/users?${params}`);
    replaceRows(tbody, await Promise.all(users.map(row)), 'No accounts match.', 5);
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
    box.replaceChildren(`Account ${created.user.name} created. One-time password: `,
      el('code', {}, created.one_time_password));
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
filter.addEventListener('input', refresh);
roleFilter.addEventListener('input', refresh);
refresh();
