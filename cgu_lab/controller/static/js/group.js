import {
  api, el, replaceRows, showStatus, showError, fact, describeLimits, describeUsage,
  limitsFromForm, fillLimitsForm, ask
} from './common.js';

const group = document.getElementById('group-page').dataset.group;
const base = `/api/groups/${encodeURIComponent(group)}`;
const members = document.getElementById('members');
const memberForm = document.getElementById('member-form');
const importForm = document.getElementById('import-form');

async function loadQuota() {
  const quota = await api('GET', `${base}/quota`);
  const dl = document.getElementById('group-quota');
  dl.replaceChildren();
  fact(dl, 'Budget', describeLimits(quota.limits));
  fact(dl, 'In use by members', describeUsage(quota.usage));
  return quota;
}

async function loadMembers() {
  const list = await api('GET', `${base}/members`);
  replaceRows(members, list.map(member => el('tr', {},
    el('th', { scope: 'row' }, member.name, el('div', { class: 'hint' }, member.display_name)),
    el('td', {}, member.role),
    el('td', {}, member.manager ? 'yes' : 'no'),
    el('td', { class: 'actions' },
      member.role !== 'student'
        ? el('button', { type: 'button', onclick: () => setMember(member.name, !member.manager) },
            member.manager ? 'Make plain member' : 'Make manager')
        : null,
      el('button', { type: 'button', class: 'danger', onclick: () => removeMember(member.name) }, 'Remove')
    )
  )), 'No members yet.', 4);
}

async function setMember(user, manager) {
  try {
    await api('PUT', `${base}/members/${encodeURIComponent(user)}`, { manager });
  } catch (error) {
    showStatus(error.message, 'error');
  }
  loadMembers();
}

async function removeMember(user) {
  if (!confirm(`Remove ${user} from ${group}?`)) return;
  try {
    await api('DELETE', `${base}/members/${encodeURIComponent(user)}`);
  } catch (error) {
    showStatus(error.message, 'error');
  }
  loadMembers();
}

memberForm.addEventListener('submit', async event => {
  event.preventDefault();
  showError('member-error', null);
  try {
    await api('PUT', `${base}/members/${encodeURIComponent(memberForm.elements.user.value.trim())}`,
      { manager: memberForm.elements.manager.checked });
    memberForm.reset();
    loadMembers();
  } catch (error) {
    showError('member-error', error);
  }
});

importForm.addEventListener('submit', async event => {
  event.preventDefault();
  showError('import-error', null);
  const file = document.getElementById('csv-file').files[0];
  const csv = file ? await file.text() : document.getElementById('csv-text').value;
  try {
    const result = await api('POST', `${base}/import`, { csv });
    document.getElementById('import-created').replaceChildren(...result.created.map(c =>
      el('tr', {}, el('td', {}, c.name), el('td', {}, c.one_time_password ? el('code', {}, c.one_time_password) : '(from the file)'))));
    document.getElementById('import-summary').textContent =
      `${result.created.length} account(s) created, ${result.enrolled.length} enrolled, ` +
      `${result.already_members.length} already members.`;
    document.getElementById('import-result').hidden = false;
    importForm.reset();
    loadMembers();
  } catch (error) {
    showError('import-error', error);
  }
});

document.getElementById('edit-budget')?.addEventListener('click', async () => {
  const dialog = document.getElementById('quota-dialog');
  const form = document.getElementById('quota-form');
  const quota = await api('GET', `${base}/quota`);
  fillLimitsForm(form, quota.limits);
  showError('quota-error', null);
  for (;;) {
    const choice = await ask(dialog);
    if (choice === 'cancel' || !choice) break;
    try {
      if (choice === 'reset') await api('DELETE', `${base}/quota`);
      else await api('PUT', `${base}/quota`, limitsFromForm(form));
      break;
    } catch (error) {
      showError('quota-error', error);
    }
  }
  loadQuota();
});

loadQuota();
loadMembers();
